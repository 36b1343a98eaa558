// Session public keys the authenticate guard checks signatures against. Learnt from
// `session.authorized` events on the SSE stream (immediately) and from the indexer's `sessions`
// table (for sessions made before this process started, or while the bridge was down).
import type { KeyObject } from 'node:crypto';
import type { Database } from '../db/database.js';
import { sessionById } from '../db/queries/sessions.js';
import { importPublicKey } from './signature.js';
import { systemClock, type Clock } from '../contracts/clock.js';

export interface SessionKey {
  sessionId: string;
  party: string;
  key: KeyObject;
  expiresAtMs: number;
}

export class SessionKeys {
  private readonly byId = new Map<string, SessionKey>();
  /** Ids recently looked up and not found, so a flood of unknown ids does not hit the database each time. */
  private readonly misses = new Map<string, number>();

  constructor(
    private readonly db: Database | null,
    private readonly maxEntries = 200_000,
    private readonly missTtlMs = 2_000,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Records a session from a `session.authorized` event or a `sessions` row. */
  add(sessionId: string, party: string, publicKeyHex: string, expiresAt: string | number): boolean {
    const key = importPublicKey(publicKeyHex);
    const expiresAtMs = typeof expiresAt === 'number' ? expiresAt : Date.parse(expiresAt);
    if (!key || !Number.isFinite(expiresAtMs)) return false;
    if (this.byId.size >= this.maxEntries) this.evictExpired();
    if (this.byId.size >= this.maxEntries) {
      const oldest = this.byId.keys().next().value;
      if (oldest !== undefined) this.byId.delete(oldest);
    }
    this.byId.set(sessionId, { sessionId, party, key, expiresAtMs });
    this.misses.delete(sessionId);
    return true;
  }

  /** The session if this process already knows it (memory only, never the database). */
  peek(sessionId: string): SessionKey | undefined {
    return this.byId.get(sessionId);
  }

  /**
   * The session, from memory or the database; null when unknown. Database failures propagate as
   * domain errors. `beforeLookup` is awaited right before a database read (not for a session held,
   * nor one recently looked up in vain): the caller's budget, whose throw refuses the lookup.
   */
  async get(sessionId: string, beforeLookup?: () => Promise<void>): Promise<SessionKey | null> {
    const known = this.byId.get(sessionId);
    if (known) return known;
    const db = this.db;
    if (!db?.configured) return null;
    const missedAt = this.misses.get(sessionId);
    if (missedAt !== undefined && this.clock.now() - missedAt < this.missTtlMs) return null;
    await beforeLookup?.();
    // Behind the one database deadline: a peer that is not PostgreSQL cannot hold the auth path.
    const row = await db.run((sql) => sessionById(sql, sessionId));
    if (!row || !this.add(row.sessionId, row.party, row.publicKey, row.expiresAt)) {
      if (this.misses.size > 10_000) this.misses.clear();
      this.misses.set(sessionId, this.clock.now());
      return null;
    }
    return this.byId.get(sessionId) ?? null;
  }

  get size(): number {
    return this.byId.size;
  }

  private evictExpired(): void {
    const now = this.clock.now();
    for (const [id, s] of this.byId) if (s.expiresAtMs <= now) this.byId.delete(id);
  }
}
