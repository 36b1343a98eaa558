// The state on subscribe of the user channels (docs/stream.md "User channels"), per proven party
// of a connection that takes `order.update` or `fill`:
//   - order.update per open order: read live from the engine (the admin open-orders read, as
//     /v1/users/:party/orders does), which also teaches the projection those orders so their later
//     fills carry size and average price; when the engine does not answer, the open orders this
//     process knows;
//   - fill per leg of the party's last LAST_FILLS fill legs, oldest first: from the database mirror
//     (under its deadline); without it, the ones this process saw.
// All marked `"snapshot": true` by the hub. They may be newer than live frames held behind them
// (the engine is ahead of the stream): apply an order.update only when its asOfSeq is above the
// one you hold.
//
// Identical concurrent reads are shared (engine/shared-read.ts): the connections that ask the same
// party's orders or fills while a read is in flight share the next read, one that starts after they
// asked, so a burst of subscribes costs the engine and the database one read per party at a time.
// What they cost is charged to the sender's address before (snapshotReads, src/http/work-budgets.ts).
import type { Frame } from '../contracts/frame.js';
import { orderFrame, type TrackedOrder, type UserOrders } from '../projections/user-orders.js';
import type { FillRow } from '../db/queries/fills.js';
import { normalizeDecimal, parseDecimal } from '../decimal.js';
import { matches, type Subscription } from './subscription.js';
import { SharedRead } from '../engine/shared-read.js';

export const LAST_FILLS = 50;

/** The reads a user channel snapshot of `sub` makes: one per party and per channel taken (0 without a snapshot). */
export function snapshotReads(sub: Pick<Subscription, 'parties' | 'kinds'>, snapshot: boolean): number {
  if (!snapshot) return 0;
  const channels = (sub.kinds?.has('order.update') ? 1 : 0) + (sub.kinds?.has('fill') ? 1 : 0);
  return channels * sub.parties.size;
}

/** An open order as the engine's admin read gives it (docs/engine.md "Orders"). */
export interface OpenOrder {
  orderId: string;
  party: string;
  market: string;
  side: string;
  type: string;
  price: string | null;
  size: string;
  filledSize: string;
  avgPrice: string | null;
  status: string;
  clientOrderId?: string | null;
  seq: number;
  updatedAt: string;
}

export interface UserSnapshotSources {
  orders: UserOrders;
  /** The party's open orders from the engine; null when it cannot say. */
  liveOrders(party: string): Promise<OpenOrder[] | null>;
  /** The party's last `n` fill legs from the database, newest first; null when it cannot say. */
  lastFills(party: string, n: number): Promise<FillRow[] | null>;
  head(): number | null;
  logger: { warn(obj: object, msg: string): void };
}

export class UserChannels {
  /** The last fill frames seen per party (the snapshot when the database cannot answer). */
  private readonly recent = new Map<string, Frame[]>();
  private readonly liveOrders: SharedRead<OpenOrder[] | null>;
  private readonly lastFills: SharedRead<FillRow[] | null>;

  constructor(private readonly sources: UserSnapshotSources) {
    this.liveOrders = new SharedRead((party) => sources.liveOrders(party));
    this.lastFills = new SharedRead((party) => sources.lastFills(party, LAST_FILLS));
  }

  observe(frame: Frame): void {
    if (frame.kind !== 'fill' || frame.userParty === undefined) return;
    let list = this.recent.get(frame.userParty);
    if (!list) this.recent.set(frame.userParty, (list = []));
    list.push(frame);
    if (list.length > LAST_FILLS) list.shift();
  }

  reset(): void {
    this.recent.clear();
  }

  /** The user channel snapshot of a connection: null when it takes neither kind or proves no party. */
  snapshot(sub: Subscription): Promise<Frame[]> | null {
    if (sub.parties.size === 0) return null;
    // Extension kinds: only when named in `kinds`.
    const wantsOrders = sub.kinds?.has('order.update') ?? false;
    const wantsFills = sub.kinds?.has('fill') ?? false;
    if (!wantsOrders && !wantsFills) return null;
    // Taken now: the fills this process saw up to the registration.
    const seen = new Map([...sub.parties].map((p) => [p, [...(this.recent.get(p) ?? [])]]));
    return Promise.all(
      [...sub.parties].map(async (party) => {
        const out: Frame[] = [];
        if (wantsOrders) out.push(...(await this.openOrders(party)));
        if (wantsFills) out.push(...(await this.fills(party, seen.get(party)!)));
        return out;
      }),
    ).then((parts) => parts.flat().filter((f) => matches(sub, f)));
  }

  private async openOrders(party: string): Promise<Frame[]> {
    const live = await this.liveOrders.read(party).catch(() => null);
    if (live === null) {
      const head = this.sources.head() ?? 0;
      const ts = new Date().toISOString();
      return this.sources.orders.open(party).map((o) => orderFrame(o, { seq: head, ts }));
    }
    return live
      .filter((o) => o.party === party)
      .map((o) => {
        this.sources.orders.know({ ...o, price: o.price ?? null });
        const filled = parseDecimal(o.filledSize);
        const tracked: TrackedOrder = {
          orderId: o.orderId,
          party,
          market: o.market,
          side: o.side,
          type: o.type,
          price: o.price ?? null,
          size: parseDecimal(o.size),
          filled,
          notional: o.avgPrice === null ? 0n : filled * parseDecimal(o.avgPrice),
          status: o.status,
          clientOrderId: o.clientOrderId ?? null,
        };
        return orderFrame(tracked, { seq: o.seq, ts: o.updatedAt });
      });
  }

  private async fills(party: string, seen: Frame[]): Promise<Frame[]> {
    const rows = await this.lastFills.read(party).catch(() => null);
    if (rows === null) return seen;
    return rows
      .slice()
      .sort((a, b) => a.seq - b.seq || a.leg - b.leg)
      .map((r) => ({
        kind: 'fill',
        seq: r.seq,
        ts: r.createdAt,
        market: r.market,
        userParty: r.party,
        payload: {
          matchId: r.matchId,
          orderId: r.orderId,
          positionId: r.positionId,
          side: r.side,
          role: r.role,
          price: normalizeDecimal(r.price),
          size: normalizeDecimal(r.size),
          fee: normalizeDecimal(r.fee),
          realizedPnl: normalizeDecimal(r.realizedPnl),
        },
      }));
  }
}
