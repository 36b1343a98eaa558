// The soak's own party, for the gateway with authentication on: a session authorized at the engine
// (the indexer records it, the gateway looks its key up in the database), and signed request headers
// for it, or for a session nobody authorized (the lookup then finds nothing: 401, or 503 when the
// database does not answer, never a hang).
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { generateKeyPair, partyId, sessionAuthBody, signedHeaders, type KeyPair } from '../simulator/signing.js';

export interface SoakParty {
  party: string;
  sessionId: string;
  sessionKey: KeyPair;
}

const partyKey = generateKeyPair();
export const soakPartyId = partyId('soak', partyKey);

export async function authorizeSession(engineUrl: string): Promise<SoakParty> {
  const sessionKey = generateKeyPair();
  const body = sessionAuthBody(soakPartyId, partyKey, sessionKey, Date.now() + 24 * 3600_000);
  const res = await request(`${engineUrl}/v1/session-auth`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  const answer = (await res.body.json()) as { ok?: boolean; sessionId?: string };
  if (answer.ok !== true || typeof answer.sessionId !== 'string') throw new Error(`session-auth: HTTP ${res.statusCode} ${JSON.stringify(answer)}`);
  return { party: soakPartyId, sessionId: answer.sessionId, sessionKey };
}

/** A session id and key the engine never saw. */
export function unknownSession(): SoakParty {
  return { party: soakPartyId, sessionId: randomBytes(16).toString('hex'), sessionKey: generateKeyPair() };
}

let lastTs = 0;
/** Signed GET headers (a fresh timestamp each time: a signature is usable once). */
export function signedGet(who: SoakParty, pathWithQuery: string): Record<string, string> {
  lastTs = Math.max(Date.now(), lastTs + 1);
  return signedHeaders(who, 'GET', pathWithQuery, lastTs, '');
}
