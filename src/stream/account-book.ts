// The accounts the gateway serves (docs/account.md): the account reducer (src/projections/account.ts)
// fed by every engine event of the live stream, completed per party from the database the first
// time the party is asked for (REST route or a stream connection with that party), then kept
// current by the events. Produces the account.update frames of complete parties.
//
// Memory: complete parties keep their open positions and orders (bounded by the parties asked
// for); the changes of other parties are kept only until the database has them (the watermark,
// the newest seq a seed or the periodic head read saw), then forgotten.
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
import type { EngineEvent } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import type { SnapshotParts } from './snapshot.js';
import { matches, type Subscription } from './subscription.js';

export const ACCOUNT_KIND = 'account.update';

/** How often the database head is read to forget what it already holds. */
const WATERMARK_MS = 15_000;

export interface AccountBookOptions {
  db: Database;
  logger: { warn(obj: object, msg: string): void };
}

export class AccountBook {
  private state: AccountsState = initialAccounts();
  private readonly seeding = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  /** Bumped by reset(): a seed read before it is dropped. */
  private generation = 0;

  constructor(private readonly options: AccountBookOptions) {}

  /** Applies one event; the account.update frames of the complete parties it changed. */
  onEvent(event: EngineEvent): Frame[] {
    const { parties, markets } = applyAccountEvent(this.state, event);
    if (markets.size > 0) {
      for (const [party, p] of this.state.parties) {
        if (!p.complete || parties.has(party)) continue;
        for (const m of markets) if (p.positions.get(m)?.size) parties.add(party);
      }
    }
    const frames: Frame[] = [];
    for (const party of parties) {
      if (!isComplete(this.state, party)) continue;
      frames.push(accountFrame(accountView(this.state, party), event.seq, event.ts));
    }
    return frames;
  }

  /** The account of one party, completing it from the database first when needed. */
  async account(party: string): Promise<AccountView> {
    await this.complete(party);
    return accountView(this.state, party);
  }

  /** The snapshot part of a connection: one account.update per party it asked for. */
  snapshot(sub: Subscription): Promise<Frame[]> | null {
    if (sub.parties.size === 0 || !sub.kinds?.has(ACCOUNT_KIND)) return null; // opt-in (subscription.ts)
    return Promise.all(
      [...sub.parties].map(async (party) => {
        const view = await this.account(party);
        return accountFrame(view, view.asOfSeq, new Date().toISOString());
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

  /** Starts the periodic watermark (forgetting what the database holds). */
  start(): void {
    const { db } = this.options;
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

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The engine history was replaced: nothing of the old one survives (a seed read before is dropped). */
  reset(): void {
    this.generation++;
    this.state = initialAccounts();
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
