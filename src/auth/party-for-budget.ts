// The party a signed call proves, checked by the gateway itself for the party budget (docs/security.md
// "Rate limits"); moved here from the trading routes so every signature check of the gateway lives in
// auth/. Null when it cannot tell: the call is then counted under its client address only and
// forwarded as before, the engine's verdict and answer being the client's. A verified signature is
// remembered, so a replay spends nobody's party budget either.
import type { ReplayGuard } from '../contracts/replay-guard.js';
import type { SessionKeys } from './session-keys.js';
import { verifySignedRequest, type SignedRequest } from './signed-request.js';

/**
 * A session store that cannot answer (the database down) gives null: the engine still verifies the
 * signature, so trading goes on through a database outage. The replay memory that cannot answer
 * (Redis down, the in-process memory full) is thrown, whatever it throws, and the call is refused
 * with 503 before it reaches the engine: a signature the gateway cannot remember could be replayed
 * through another replica (docs/fleet.md).
 */
export async function verifiedPartyForBudget(sessions: SessionKeys, replays: ReplayGuard, input: SignedRequest): Promise<string | null> {
  let memoryFailed = false;
  const memory: ReplayGuard = {
    windowMs: replays.windowMs,
    firstUse: (key, ttlMs, signedAtMs) =>
      replays.firstUse(key, ttlMs, signedAtMs).catch((err: unknown) => {
        memoryFailed = true;
        throw err;
      }),
  };
  try {
    const verdict = await verifySignedRequest(sessions, memory, input);
    return verdict.ok ? verdict.party : null;
  } catch (err) {
    if (memoryFailed) throw err;
    return null; // the session store cannot answer: counted under the address only
  }
}
