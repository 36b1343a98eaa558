// State on subscribe ("snapshot frames"): what a new connection receives before live frames, as
// ordinary frames of spec kinds marked `"snapshot": true` (docs/stream.md "State on subscribe"):
//   - the latest orderbook.snapshot of each market (kept from the poller's frames),
//   - the open candle of each market × interval (the candle projection's state),
//   - per party of the connection: one position.update per open position and one balance.update.
// Parties are known from the fill frames this process has projected. Positions last changed
// before that (the process started after them) are read from the database mirror (`positions`
// with status open; balance = `new_balance` of the party's last fill) through the db query
// modules and their deadline, so the party part may arrive later: the hub holds the connection's
// live frames until it is written.
import type { Database } from '../db/database.js';
import { EMPTY_PAGE, type Page } from '../db/queries/page.js';
import { listPositions, type PositionRow } from '../db/queries/positions.js';
import { listFills, type FillRow } from '../db/queries/fills.js';
import { bucketPayload, type Bucket, type CandlesState } from '../projections/candles.js';
import { normalizeDecimal, ZERO } from '../decimal.js';
import { CANDLE_INTERVALS, type Frame } from '../contracts/frame.js';
import { matches, type Subscription } from './subscription.js';

export interface SnapshotParts {
  /** Frames known now (as of the head at the call). */
  frames: Frame[];
  /** Frames that need a database read (the party part), null when none. Never rejects. */
  later: Promise<Frame[]> | null;
}

/** What the database mirror says about one party, read under the database deadline. */
export interface PartyStore {
  openPositions(party: string): Promise<PositionRow[]>;
  /** The party's last fill leg (greatest seq, leg), null without a fill. */
  lastFill(party: string): Promise<Pick<FillRow, 'seq' | 'newBalance' | 'createdAt'> | null>;
}

const POSITIONS_PAGE = 500;
/** More open positions than this for one party is not a trading account; the rest is left out (and logged). */
const MAX_POSITION_PAGES = 20;

export function partyStore(db: Database): PartyStore | null {
  if (!db.configured) return null;
  return {
    async openPositions(party) {
      const rows: PositionRow[] = [];
      let before: number | undefined;
      for (let i = 0; i < MAX_POSITION_PAGES; i++) {
        const page: Page<PositionRow> = await db.read(EMPTY_PAGE, (sql) => listPositions(sql, { party, status: 'open', before, limit: POSITIONS_PAGE }));
        rows.push(...page.items);
        if (page.nextCursor === null) break;
        before = page.nextCursor;
      }
      return rows;
    },
    async lastFill(party) {
      const page: Page<FillRow> = await db.read(EMPTY_PAGE, (sql) => listFills(sql, { party, limit: 1 }));
      let last: FillRow | null = null;
      for (const r of page.items) if (!last || r.seq > last.seq || (r.seq === last.seq && r.leg > last.leg)) last = r;
      return last;
    },
  };
}

export interface LiveStateOptions {
  candles(): CandlesState;
  /** The newest event seq delivered (null before the first). */
  head(): number | null;
  store: PartyStore | null;
  logger: { warn(obj: object, msg: string): void };
}

/**
 * The per-party and per-market state the snapshot needs beyond the projections', kept from the
 * frames the runtime publishes (`observe`), and the snapshot builder.
 */
export class LiveState {
  private readonly books = new Map<string, Frame>();
  private readonly positions = new Map<string, Map<string, Frame>>();
  /** Positions seen closing without having been seen open: opened before this memory began. */
  private readonly closedUnseen = new Map<string, Set<string>>();
  private readonly balances = new Map<string, Frame>();
  /** The snapshot frame of an open bar, made again only when the bar changed (a reconnect storm reuses it, and its bytes). */
  private readonly barFrames = new WeakMap<Bucket, Frame>();
  /**
   * This memory holds every party change after this seq (the bridge's start point); older ones are
   * in the database. 0: the whole history; null: not known yet.
   */
  coveredAfter: number | null = null;
  /**
   * false after a history replacement: the mirror may still hold the old history, and whether it
   * has caught up cannot be told cheaply, so party snapshots then use this memory alone.
   */
  private storeTrusted = true;

  constructor(private readonly sources: LiveStateOptions) {}

  observe(frame: Frame): void {
    switch (frame.kind) {
      case 'orderbook.snapshot':
        if (frame.market !== undefined) this.books.set(frame.market, frame);
        break;
      case 'balance.update':
        if (frame.userParty !== undefined) this.balances.set(frame.userParty, frame);
        break;
      case 'position.update': {
        const party = frame.userParty;
        const id = frame.payload.positionId as string;
        if (party === undefined) break;
        let open = this.positions.get(party);
        if (/^-?0\.0+$/.test(frame.payload.size as string)) {
          if (open?.delete(id)) {
            if (open.size === 0) this.positions.delete(party);
          } else {
            let closed = this.closedUnseen.get(party);
            if (!closed) this.closedUnseen.set(party, (closed = new Set()));
            closed.add(id);
          }
        } else {
          if (!open) this.positions.set(party, (open = new Map()));
          open.set(id, frame);
        }
        break;
      }
    }
  }

  /** The engine history was replaced: nothing of the old one survives. */
  reset(coveredAfter: number): void {
    this.books.clear();
    this.positions.clear();
    this.closedUnseen.clear();
    this.balances.clear();
    this.coveredAfter = coveredAfter;
    this.storeTrusted = false;
  }

  /** The snapshot frames for one connection, as of now; only frames its filters admit. */
  build(sub: Subscription, options: { store?: boolean } = {}): SnapshotParts {
    const frames: Frame[] = [];
    const admit = (f: Frame): void => {
      if (matches(sub, f)) frames.push(f);
    };
    for (const book of this.books.values()) admit(book);
    for (const [market, byInterval] of this.sources.candles().open) {
      for (const interval of CANDLE_INTERVALS) {
        const b = byInterval.get(interval);
        if (!b) continue;
        let f = this.barFrames.get(b);
        if (!f || f.seq !== b.lastSeq || f.payload.trades !== b.trades) {
          f = { kind: 'candle.update', seq: b.lastSeq, ts: new Date(b.lastTsMs).toISOString(), market, interval, payload: bucketPayload(b) };
          this.barFrames.set(b, f);
        }
        admit(f);
      }
    }
    const wantsParty = sub.parties.size > 0 && (!sub.kinds || sub.kinds.has('position.update') || sub.kinds.has('balance.update'));
    if (!wantsParty) return { frames, later: null };

    const head = this.sources.head() ?? 0;
    const covered = this.coveredAfter;
    // The database is asked unless this memory holds the whole history (or the caller says not to).
    const store = options.store === false || covered === 0 || !this.storeTrusted ? null : this.sources.store;
    // The memory's part, taken now (the connection's live frames are held from this point).
    const mine = [...sub.parties].map((party) => ({
      party,
      positions: [...(this.positions.get(party)?.values() ?? [])],
      balance: this.balances.get(party) ?? null,
    }));
    const partyFrames = (fromStore: Map<string, { rows: PositionRow[]; fill: Awaited<ReturnType<PartyStore['lastFill']>> }> | null): Frame[] => {
      const out: Frame[] = [];
      for (const m of mine) {
        const known = new Set(m.positions.map((f) => f.payload.positionId as string));
        const closed = this.closedUnseen.get(m.party);
        const stored = fromStore?.get(m.party);
        for (const f of m.positions) out.push(f);
        for (const row of stored?.rows ?? []) {
          // A change after `covered` was seen by this memory, which has it open (known) or closed.
          if (known.has(row.positionId) || closed?.has(row.positionId) || (covered !== null && row.updatedSeq > covered)) continue;
          out.push(positionFrame(row));
        }
        const fill = stored?.fill ?? null;
        if (m.balance) out.push(m.balance);
        else if (fill) out.push(balanceFrame(m.party, normalizeDecimal(fill.newBalance), fill.seq, fill.createdAt));
        // No fill at all: zero, as the REST balance says; unknown (no database answer, and this
        // memory does not reach back to seq 1): no frame rather than a wrong zero.
        else if (fromStore !== null || covered === 0) out.push(balanceFrame(m.party, ZERO, head, new Date().toISOString()));
      }
      return out.filter((f) => matches(sub, f));
    };
    if (!store) return { frames: [...frames, ...partyFrames(null)], later: null };
    const later = Promise.all(
      mine.map(async (m) => {
        const [rows, fill] = await Promise.all([store.openPositions(m.party), m.balance ? null : store.lastFill(m.party)]);
        return [m.party, { rows, fill }] as const;
      }),
    ).then(
      (entries) => partyFrames(new Map(entries)),
      (err: unknown) => {
        this.sources.logger.warn({ err: (err as Error).message }, 'stream snapshot: database unavailable; positions and balances known to this process only');
        return partyFrames(null);
      },
    );
    return { frames, later };
  }
}

function positionFrame(row: PositionRow): Frame {
  return {
    kind: 'position.update',
    seq: row.updatedSeq,
    ts: row.updatedAt,
    market: row.market,
    userParty: row.party,
    payload: {
      positionId: row.positionId,
      size: normalizeDecimal(row.size),
      entryPrice: normalizeDecimal(row.entryPrice),
      realizedPnl: normalizeDecimal(row.realizedPnl),
      asOfSeq: row.updatedSeq,
    },
  };
}

function balanceFrame(party: string, balance: string, seq: number, ts: string): Frame {
  return { kind: 'balance.update', seq, ts, userParty: party, payload: { balance, asOfSeq: seq } };
}
