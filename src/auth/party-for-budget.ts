// The party a signed call proves, checked by the gateway itself for the party budget (docs/security.md
// "Rate limits"); every signature check of the gateway lives in auth/. Null when it cannot tell: the
// call is then counted under its client address only and forwarded, the engine's verdict and answer
// being the client's. A verified signature is remembered, so a replay spends nobody's party budget.
import type { ReplayGuard } from '../contracts/replay-guard.js';
import type { SessionKeys } from './session-keys.js';
import { gatewayRefusal, verifySignedRequest, type RefuseWhen, type SignatureVerdict, type SignedRequest } from './signed-request.js';

/**
 * A signature the replay memory already holds is refused here (401), not forwarded: the gateway may
 * have spent it without the engine ever seeing it (a skipped batch item, a replace's unsent place),
 * so only the gateway can refuse it (`gatewayRefusal`). With `when: 'certain'` every refusal the
 * engine would make too is thrown (a cancel-replace's place, judged before its cancel is sent).
 *
 * A session store that cannot answer (the database down) gives null: the engine still verifies the
 * signature, so trading goes on through a database outage. The replay memory that cannot answer
 * (Redis down, the in-process memory full) is thrown, whatever it throws, and the call is refused
 * with 503 before it reaches the engine: a signature the gateway cannot remember could be replayed
 * through another replica (docs/fleet.md).
 */
export async function verifiedPartyForBudget(sessions: SessionKeys, replays: ReplayGuard, input: SignedRequest, when: RefuseWhen = 'spent'): Promise<string | null> {
  let memoryFailed = false;
  const failed = (err: unknown): never => {
    memoryFailed = true;
    throw err;
  };
  const memory: ReplayGuard = {
    windowMs: replays.windowMs,
    firstUse: (key, ttlMs, signedAtMs) => replays.firstUse(key, ttlMs, signedAtMs).catch(failed),
    spent: (keys) => replays.spent(keys).catch(failed),
  };
  let verdict: SignatureVerdict;
  try {
    verdict = await verifySignedRequest(sessions, memory, input);
  } catch (err) {
    if (memoryFailed) throw err;
    return null; // the session store cannot answer: counted under the address only
  }
  if (verdict.ok) return verdict.party;
  const refusal = gatewayRefusal(verdict, when);
  if (refusal) throw refusal;
  return null;
}
