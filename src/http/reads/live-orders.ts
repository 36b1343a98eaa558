// Live open orders: the engine's own view of a party's non-terminal orders, merged into the mirror
// page of `/v1/users/:party/orders` (docs/rest.md "Live open orders").
//
// Merge rules (docs/rest.md):
//   - a non-terminal mirror row the engine still lists is replaced by the engine's version
//     (status, filledSize, avgPrice … are current), `source: "engine"`;
//   - a non-terminal mirror row the engine does NOT list has left the book (filled or cancelled)
//     while the mirror lags: it is omitted, never reported open; it comes back with its terminal
//     status once the mirror catches up;
//   - a live order the mirror does not have yet is added, keyed by the engine's `seq` as createdSeq,
//     on the page whose createdSeq range holds it, so pages neither repeat nor lose it;
//   - terminal mirror rows are served as they are.
// Any failure of the live read (old engine: 400 market_unsupported for `all`, unreachable, timeout, no
// admin token, a body that is not an order list) falls back to the plain mirror page. One answer is
// not a failure: 400 market_unsupported for a SPECIFIC market (not `all`) means the market is unknown
// to the engine, so the live view is simply empty (`unknownMarket`), with no fallback and no warning.
import type { EngineClient } from '../../engine/client.js';
import type { OrderRow, OrderStatus } from '../../db/queries/orders.js';
import { NON_TERMINAL } from '../../db/queries/orders.js';
import type { Page } from '../../db/queries/page.js';

export const LIVE_FAILURE_MESSAGE = 'ordersForUser: live open-orders fetch failed';

/** The engine's Order object (docs/engine.md "Orders and matching"), as far as the merge needs it. */
export interface EngineOrder
  extends Pick<OrderRow, 'orderId' | 'party' | 'market' | 'side' | 'type' | 'tif' | 'price' | 'size' | 'filledSize' | 'avgPrice' | 'status'> {
  reduceOnly?: boolean;
  clientOrderId?: string | null;
  tp?: { triggerPrice: string; limitPrice: string | null; size: string | null } | null;
  sl?: { triggerPrice: string; limitPrice: string | null; size: string | null } | null;
  createdAt: string;
  updatedAt: string;
  seq: number;
}

export type OrderItem = OrderRow & { source: 'mirror' | 'engine' };

export type LiveResult =
  | { ok: true; orders: EngineOrder[]; /** the engine does not know the asked market: no open orders */ unknownMarket?: true }
  | { ok: false; reason: string; engineStatus?: number; engineCode?: string };

function isEngineOrder(o: unknown): o is EngineOrder {
  const x = o as Record<string, unknown> | null;
  return (
    typeof x === 'object' && x !== null &&
    typeof x.orderId === 'string' && typeof x.status === 'string' && typeof x.size === 'string' &&
    typeof x.filledSize === 'string' && typeof x.seq === 'number'
  );
}

/** Never throws: a failure is a value the caller logs and falls back on. */
export async function fetchLiveOrders(engine: EngineClient, party: string, market: string | undefined, timeoutMs: number): Promise<LiveResult> {
  if (!engine.options.adminToken) return { ok: false, reason: 'ENGINE_ADMIN_TOKEN is not set' };
  const path = `/v1/admin/users/${encodeURIComponent(party)}/orders?market=${encodeURIComponent(market ?? 'all')}`;
  try {
    const body = await engine.getJson<{ orders?: unknown }>(path, { admin: true, timeoutMs });
    if (!Array.isArray(body.orders) || !body.orders.every(isEngineOrder)) {
      return { ok: false, reason: 'engine answered without an order list' };
    }
    return { ok: true, orders: body.orders };
  } catch (err) {
    const e = err as { status?: number; code?: string; message?: string };
    // A misspelled or unlisted market on any engine build: nothing is open there. Only `all` (or no
    // market) answered market_unsupported is the old-engine case the spec's fallback is for.
    if (market !== undefined && market !== 'all' && e.status === 400 && e.code === 'market_unsupported') {
      return { ok: true, orders: [], unknownMarket: true };
    }
    return {
      ok: false,
      reason: e.message ?? String(err),
      ...(typeof e.status === 'number' ? { engineStatus: e.status } : {}),
      ...(typeof e.code === 'string' ? { engineCode: e.code } : {}),
    };
  }
}

/** The engine's order in the mirror's row shape; `createdSeq` from the mirror row when there is one. */
export function engineOrderToRow(o: EngineOrder, mirror: OrderRow | undefined): OrderRow {
  return {
    orderId: o.orderId,
    party: o.party,
    market: o.market,
    side: o.side,
    type: o.type,
    tif: o.tif,
    price: o.price,
    size: o.size,
    filledSize: o.filledSize,
    avgPrice: o.avgPrice,
    status: o.status,
    clientOrderId: o.clientOrderId ?? null,
    reduceOnly: o.reduceOnly ?? false,
    tpTriggerPrice: o.tp?.triggerPrice ?? null,
    tpLimitPrice: o.tp?.limitPrice ?? null,
    tpSize: o.tp?.size ?? null,
    slTriggerPrice: o.sl?.triggerPrice ?? null,
    slLimitPrice: o.sl?.limitPrice ?? null,
    slSize: o.sl?.size ?? null,
    createdSeq: mirror?.createdSeq ?? o.seq,
    updatedSeq: o.seq,
    createdAt: mirror?.createdAt ?? o.createdAt,
    updatedAt: o.updatedAt,
  };
}

export interface MergeOptions {
  /** The status filter of the request, if any. */
  status?: OrderStatus | undefined;
  market?: string | undefined;
  before?: number | undefined;
  /** Ids of live orders the mirror has on other pages: those are not "new" (their own page shows them). */
  mirrorIds: ReadonlySet<string>;
}

/** The mirror page as served when the live read failed: rows as the mirror has them. */
export function mirrorOnly(page: Page<OrderRow>): Page<OrderItem> {
  return { items: page.items.map((r) => ({ ...r, source: 'mirror' as const })), nextCursor: page.nextCursor };
}

export function mergeLive(page: Page<OrderRow>, live: EngineOrder[], opts: MergeOptions): Page<OrderItem> {
  const liveById = new Map(live.map((o) => [o.orderId, o]));
  const items: OrderItem[] = [];
  for (const row of page.items) {
    if (!NON_TERMINAL.includes(row.status)) {
      items.push({ ...row, source: 'mirror' });
      continue;
    }
    const current = liveById.get(row.orderId);
    if (!current) continue; // left the book while the mirror lags: never reported open
    items.push({ ...engineOrderToRow(current, row), source: 'engine' });
  }
  // Live orders the mirror has not recorded yet, placed on the page whose createdSeq range holds them.
  const upper = opts.before ?? Number.POSITIVE_INFINITY;
  const lower = page.nextCursor ?? 0;
  const onPage = new Set(page.items.map((r) => r.orderId));
  for (const o of live) {
    if (onPage.has(o.orderId) || opts.mirrorIds.has(o.orderId)) continue;
    if (opts.market !== undefined && o.market !== opts.market) continue;
    if (o.seq >= upper || o.seq < lower) continue;
    items.push({ ...engineOrderToRow(o, undefined), source: 'engine' });
  }
  const filtered = opts.status === undefined ? items : items.filter((i) => i.status === opts.status);
  filtered.sort((a, b) => b.createdSeq - a.createdSeq || (a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0));
  return { items: filtered, nextCursor: page.nextCursor };
}
