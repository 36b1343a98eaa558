// The accounts the gateway serves (docs/account.md): the account reducer (src/projections/account.ts)
// fed by every engine event of the live stream, completed per party from the database the first
// time the party is asked for (REST route or a stream connection with that party), then kept
// current by the events. Produces the account.update frames of the complete parties a stream
// connection asks for.
//
// Memory: complete parties keep their open positions and orders, but only while a stream
// connection needs them or a REST read touched them lately (PartyRetention, account-retention.ts,
// ADR 0082): an evicted party is dropped whole and seeded again on its next read, as a party never
// asked for. The changes of other parties are kept only until the database has them (the
// watermark, the newest seq a seed or the periodic head read saw), then forgotten.
import type { Database } from '../db/database.js';
import { EMPTY_SEED, loadAccountSeed } from '../db/queries/account.js';
import {
  accountView,
  applyAccountEvent,
  initialAccounts,
  isComplete,
  mergeSeed,
  pruneIncomplete,
  type AccountSeed,
  type AccountsState,
  type AccountView,
} from '../projections/account.js';
import type { EngineEvent, FillPayload } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import type { SnapshotParts } from './snapshot.js';
import { matches, type Subscription } from './subscription.js';
import { PartyRetention } from './account-retention.js';
import { AccountMetrics } from './account-metrics.js';
import type { Registry } from 'prom-client';
import { systemClock, type Clock, type ClockTimer } from '../contracts/clock.js';

export const ACCOUNT_KIND = 'account.update';

/** How often the database head is read to forget what it already holds. */
const WATERMARK_MS = 15_000;

export interface AccountBookOptions {
  db: Database;
  logger: { warn(obj: object, msg: string): void };
  /** A party kept for REST reads alone is evicted this long after its last read (ACCOUNT_IDLE_MS). */
  idleMs: number;
  /** Most parties kept for REST reads alone (ACCOUNT_READ_PARTIES_MAX). */
  maxReadParties: number;
  /** Where `bff_account_parties` is reported (absent: not reported). */
  registry?: Registry;
  /** Times reads, holds and the idle sweep (default systemClock). */
  clock?: Clock;
}

/** The parties of a connection's filters that need a complete account. */
function accountParties(sub: Subscription | null): ReadonlySet<string> {
  return sub && sub.kinds?.has(ACCOUNT_KIND) ? sub.parties : NONE;
}
const NONE: ReadonlySet<string> = new Set();

export class AccountBook {
  private state: AccountsState = initialAccounts();
  private readonly seeding = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private sweeper: ClockTimer | null = null;
  private readonly clock: Clock;
  /** Bumped by reset(): a seed read before it is dropped. */
  private generation = 0;
  private readonly retention: PartyRetention;
  private readonly metrics: AccountMetrics | null;

  constructor(private readonly options: AccountBookOptions) {
    this.clock = options.clock ?? systemClock;
    this.retention = new PartyRetention({
      idleMs: options.idleMs,
      maxRead: options.maxReadParties,
      evict: (party) => this.evict(party),
      isComplete: (party) => isComplete(this.state, party),
    });
    this.metrics = options.registry ? AccountMetrics.for(options.registry) : null;
    this.metrics?.watch(this);
  }

  /**
   * Applies one event; the account.update frames of the parties it changed that a stream
   * connection holds. A party kept for reads alone is kept current but gets no frame (nobody would
   * receive it; its read computes the view): the work per event beyond the reducer grows with the
   * parties connections ask for, not with those read lately (ADR 0082).
   */
  onEvent(event: EngineEvent, fill?: FillPayload | null): Frame[] {
    const { parties, markets } = applyAccountEvent(this.state, event, fill);
    const frames: Frame[] = [];
    if (this.retention.held === 0) return frames;
    const changed = new Set<string>();
    for (const party of parties) if (this.retention.isHeld(party)) changed.add(party);
    if (markets.size > 0) {
      // A mark move changes the account of every holder of a position there.
      for (const party of this.retention.heldParties()) {
        const p = this.state.parties.get(party);
        if (!p?.complete || changed.has(party)) continue;
        for (const m of markets) if (p.positions.get(m)?.size) changed.add(party);
      }
    }
    for (const party of changed) {
      if (!isComplete(this.state, party)) continue;
      frames.push(accountFrame(accountView(this.state, party), event.seq, event.ts));
    }
    return frames;
  }

  /** The account of one party, completing it from the database first when needed. */
  async account(party: string): Promise<AccountView> {
    await this.complete(party);
    // The view is taken before the touch, in the same step: a touch may evict other parties, never this one.
    const view = accountView(this.state, party);
    this.retention.touch(party, this.clock.now());
    return view;
  }

  /**
   * A stream connection's filters changed (`before` null: it opened; `after` null: it closed): the
   * parties it asks account.update for are held complete while it does. Called before the
   * connection's snapshot is read.
   */
  subscriptionChanged(before: Subscription | null, after: Subscription | null): void {
    const was = accountParties(before);
    const now = accountParties(after);
    if (was === now) return;
    const t = this.clock.now();
    this.retention.hold([...now].filter((p) => !was.has(p)), 1, t);
    this.retention.hold([...was].filter((p) => !now.has(p)), -1, t);
  }

  /** Drops a party's complete account (PartyRetention decided): its next read seeds it again. */
  private evict(party: string): void {
    if (!isComplete(this.state, party)) return;
    this.state.parties.delete(party);
    this.metrics?.evictions.inc();
  }

  /** Whether the party's account is complete in memory (kept by a connection or a recent read). */
  isComplete(party: string): boolean {
    return isComplete(this.state, party);
  }

  /** What `bff_account_parties` reports. */
  counts(): { complete: number; held: number; incomplete: number } {
    let complete = 0;
    for (const p of this.state.parties.values()) if (p.complete) complete++;
    return { complete, held: this.retention.held, incomplete: this.state.parties.size - complete };
  }

  /** The snapshot part of a connection: one account.update per party it asked for. */
  snapshot(sub: Subscription): Promise<Frame[]> | null {
    if (sub.parties.size === 0 || !sub.kinds?.has(ACCOUNT_KIND)) return null; // opt-in (subscription.ts)
    return Promise.all(
      [...sub.parties].map(async (party) => {
        const view = await this.account(party);
        return accountFrame(view, view.asOfSeq, new Date(this.clock.now()).toISOString());
      }),
    ).then(
      (frames) => frames.filter((f) => matches(sub, f)),
      (err: unknown) => {
        this.options.logger.warn({ err: (err as Error).message }, 'stream snapshot: account unavailable');
        return [];
      },
    );
  }

  private complete(party: string): Promise<void> {
    if (isComplete(this.state, party)) return Promise.resolve();
    let pending = this.seeding.get(party);
    if (!pending) {
      const generation = this.generation;
      pending = this.loadSeed(party)
        .then((seed) => {
          if (generation !== this.generation) return;
          mergeSeed(this.state, party, seed);
          pruneIncomplete(this.state, seed.asOfSeq);
        })
        .finally(() => this.seeding.delete(party));
      this.seeding.set(party, pending);
    }
    return pending;
  }

  private loadSeed(party: string): Promise<AccountSeed> {
    const { db } = this.options;
    return db.readSnapshot(EMPTY_SEED, (tx) => loadAccountSeed(tx, party));
  }

  /** Starts the eviction of idle parties and the periodic watermark (forgetting what the database holds). */
  start(): void {
    const { db } = this.options;
    this.startSweeping();
    if (this.timer || !db.configured) return;
    this.timer = setInterval(() => {
      void db
        .read(null, async (sql) => (await sql<{ seq: number | null }[]>`SELECT max(seq) AS seq FROM events`)[0]?.seq ?? null)
        .then((seq) => {
          if (seq !== null) pruneIncomplete(this.state, seq);
        })
        .catch(() => {});
    }, WATERMARK_MS);
    this.timer.unref();
  }

  /** Evicts idle parties a few times per idle period (the cap is kept on every read). */
  private startSweeping(): void {
    if (this.sweeper) return;
    const period = Math.min(60_000, Math.max(25, Math.floor(this.options.idleMs / 4)));
    const sweep = (): void => {
      try {
        this.retention.trim(this.clock.now());
      } finally {
        if (this.sweeper) this.sweeper = this.clock.setTimeout(sweep, period).unref();
      }
    };
    this.sweeper = this.clock.setTimeout(sweep, period).unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.sweeper) this.clock.clearTimeout(this.sweeper);
    this.timer = null;
    this.sweeper = null;
  }

  /** The engine history was replaced: nothing of the old one survives (a seed read before is dropped). */
  reset(): void {
    this.generation++;
    this.state = initialAccounts();
    this.retention.clearReads();
  }
}

/** The account of one party from the database alone (a gateway without the live stream). */
export async function accountFromDatabase(db: Database, party: string): Promise<AccountView> {
  const state = initialAccounts();
  mergeSeed(state, party, await db.readSnapshot(EMPTY_SEED, (tx) => loadAccountSeed(tx, party)));
  return accountView(state, party);
}

function accountFrame(view: AccountView, seq: number, ts: string): Frame {
  return { kind: ACCOUNT_KIND, seq, ts, userParty: view.party, payload: view as unknown as Record<string, unknown> };
}

/** A connection's snapshot with its account frames after the other party frames. */
export function withAccounts(parts: SnapshotParts, accounts: Promise<Frame[]> | null): SnapshotParts {
  if (!accounts) return parts;
  const later = parts.later ? Promise.all([parts.later, accounts]).then(([a, b]) => [...a, ...b]) : accounts;
  return { frames: parts.frames, later };
}
