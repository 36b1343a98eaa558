// When the engine accepts a `/v1/session-auth`, the gateway already knows everything the later
// `session.authorized` SSE event will say (party, session key, expiry, id). Teaching it to the
// guard now closes the window in which a fresh session could not read its own party routes yet.
// Only a 200 `ok:true` answer counts: the engine has verified the party's signature by then.
import type { SessionKeys } from '../../auth/session-keys.js';
import { parseJson, type EngineResponse } from '../../engine/client.js';

export function learnSession(sessions: SessionKeys, requestBody: unknown, res: EngineResponse): boolean {
  if (res.status !== 200) return false;
  const answer = parseJson(res.body) as { ok?: unknown; sessionId?: unknown; expiresAt?: unknown } | undefined;
  const sent = requestBody as { party?: unknown; sessionPublicKey?: unknown } | undefined;
  if (!answer || answer.ok !== true || typeof answer.sessionId !== 'string' || typeof answer.expiresAt !== 'number') return false;
  if (!sent || typeof sent.party !== 'string' || typeof sent.sessionPublicKey !== 'string') return false;
  return sessions.add(answer.sessionId, sent.party, sent.sessionPublicKey, answer.expiresAt);
}
