// The signature of a call that arrived without headers (a stream message's `user`, `sessionId`,
// `sig`), read exactly as REST reads the three signing headers: a missing one is the same 401 with
// the same message, so a call is judged alike whichever way it came.
import { signedHeaders, type SignedHeaders } from './signed-request.js';

/** The three signing values as a message carries them (absent ones are judged as missing headers). */
export interface SigningFields {
  user?: string;
  sessionId?: string;
  sig?: string;
}

export function signedHeadersOf(s: SigningFields): SignedHeaders {
  const headers: Record<string, string> = {};
  if (s.user !== undefined) headers['x-user'] = s.user;
  if (s.sessionId !== undefined) headers['x-session-id'] = s.sessionId;
  if (s.sig !== undefined) headers['x-session-sig'] = s.sig;
  return signedHeaders({ headers });
}
