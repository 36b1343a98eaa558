// Where the session keys the guard checks come from, besides the indexer's `sessions` table
// (read on demand by SessionKeys): the engine's history, and the engine's own answer to a
// session authorization the gateway proxied. Both say the same facts (party, session id, public
// key, expiry); each is learnt here, in one place.
import type { EngineEvent } from '../contracts/engine-event.js';
import type { LiveFeature } from '../contracts/live-feature.js';
import type { SessionKeys } from './session-keys.js';

export class SessionLearning implements LiveFeature {
  readonly name = 'session-keys';

  constructor(private readonly sessions: SessionKeys) {}

  /** A `session.authorized` event (a live feature: the runtime tells it every event, first of all). */
  event(event: EngineEvent): void {
    if (event.kind !== 'session.authorized' || !event.party) return;
    const p = event.payload as { sessionId?: unknown; sessionPublicKey?: unknown; expiresAt?: unknown };
    if (typeof p.sessionId === 'string' && typeof p.sessionPublicKey === 'string' && (typeof p.expiresAt === 'string' || typeof p.expiresAt === 'number')) {
      this.sessions.add(p.sessionId, event.party, p.sessionPublicKey, p.expiresAt);
    }
  }

  /**
   * The engine accepted a `/v1/session-auth` (its 200 answer, parsed): the gateway already knows
   * everything the later `session.authorized` event will say. Learning it now closes the window in
   * which a fresh session could not read its own party routes yet. Only `ok: true` counts: the
   * engine has verified the party's signature by then.
   */
  authorized(requestBody: unknown, answer: unknown): boolean {
    const a = answer as { ok?: unknown; sessionId?: unknown; expiresAt?: unknown } | undefined;
    const sent = requestBody as { party?: unknown; sessionPublicKey?: unknown } | undefined;
    if (!a || a.ok !== true || typeof a.sessionId !== 'string' || typeof a.expiresAt !== 'number') return false;
    if (!sent || typeof sent.party !== 'string' || typeof sent.sessionPublicKey !== 'string') return false;
    return this.sessions.add(a.sessionId, sent.party, sent.sessionPublicKey, a.expiresAt);
  }
}
