// The desk calls of a market maker (docs/client.md "The desk"): batches of signed places and
// cancels, cancel-replace, cancel-all. Each item is signed by the client's session exactly as the
// call alone would be (`POST\n/v1/orders\n<ts>\n<body>`, `DELETE\n/v1/orders/<id>\n<ts>\n`), so
// the engine verifies the same bytes; the gateway only carries them. Kept apart from client.ts:
// these are functions over a GatewayClient, not methods of it.
import type { GatewayClient } from './client.js';
import { requireDecimalStrings } from './decimal-input.js';
import { GatewayError } from './errors.js';
import { requestMessage, type Session } from './signing.js';
import type { Answer, OrderAccepted, OrderCancelled, OrderRequest, Rejection } from './types.js';
import type { Sender } from './transport.js';

/** Most items of one batch (the gateway refuses more with 400). */
export const MAX_BATCH_ITEMS = 50;

/** A signed place item: the order body exactly as signed, and its signature. */
export interface SignedPlace {
  op: 'place';
  body: string;
  sig: string;
}
/** A signed cancel item. */
export interface SignedCancel {
  op: 'cancel';
  orderId: string;
  sig: string;
}
export type SignedItem = SignedPlace | SignedCancel;

/**
 * How the items go to the engine: all at once (default), or one after the other; `stopOnFailure`
 * only exists for ordered batches (concurrent items are all sent at once), so
 * `{ stopOnFailure: true }` alone does not compile.
 */
export type BatchOptions = { mode?: 'concurrent'; stopOnFailure?: never } | { mode: 'ordered'; stopOnFailure?: boolean };

/** The gateway's error shape, as a refused item carries it. */
export interface ItemRefusal {
  error: string;
  code: string;
  [extra: string]: unknown;
}

/** What became of one item: the engine's answer (check `ok`), a refusal, or not sent. */
export type ItemOutcome<T> =
  | { outcome: 'answered'; status: number; body: Answer<T> }
  | { outcome: 'refused'; status: number; body: ItemRefusal }
  | { outcome: 'skipped'; status: null; body: null };
export type PlaceOutcome = ItemOutcome<OrderAccepted> & { op: 'place' };
export type CancelOutcome = ItemOutcome<OrderCancelled> & { op: 'cancel' };

export interface BatchResult<R> {
  /** One per item, in the order given. */
  results: R[];
  /** What the batch cost of the rate-limit budgets. */
  weight: number;
}

export interface ReplaceResult {
  cancel: CancelOutcome;
  /** `skipped` when the cancel was not confirmed (e.g. the order had already filled: `order_not_open`). */
  place: PlaceOutcome;
  /** The cancel confirmed and the new order accepted. */
  replaced: boolean;
}

/** An item that did what it was sent for (the engine answered ok:true). */
export function itemSucceeded<T>(o: ItemOutcome<T>): o is { outcome: 'answered'; status: number; body: T & { ok: true } } {
  return o.outcome === 'answered' && o.body.ok;
}

/** The refusal or rejection of an item, when it has one (for logs and toasts). */
export function itemFailure<T>(o: ItemOutcome<T>): Rejection | ItemRefusal | null {
  if (o.outcome === 'skipped') return null;
  if (o.outcome === 'refused') return o.body;
  return o.body.ok ? null : o.body;
}

function sessionOf(client: GatewayClient, what: string): Session {
  const session = client.session;
  if (!session) throw new Error(`${what} needs a session: call createSession first`);
  return session;
}

/** Signs one order as `POST /v1/orders` would be signed; valid for ±30 s around `tsMs` (default: now). */
export async function signPlace<const M extends string>(session: Session, order: OrderRequest<M>, tsMs?: number): Promise<SignedPlace> {
  requireDecimalStrings(order, ['size', 'price'], ['tp', 'sl']);
  const body = JSON.stringify(order);
  const ts = tsMs ?? (await session.nextTs());
  return { op: 'place', body, sig: `${ts}.${await session.signature(requestMessage('POST', '/v1/orders', ts, body))}` };
}

/** Signs the cancel of one order as `DELETE /v1/orders/:orderId` would be signed. */
export async function signCancel(session: Session, orderId: string, tsMs?: number): Promise<SignedCancel> {
  const ts = tsMs ?? (await session.nextTs());
  return { op: 'cancel', orderId, sig: `${ts}.${await session.signature(requestMessage('DELETE', `/v1/orders/${encodeURIComponent(orderId)}`, ts, ''))}` };
}

/** Where a desk call goes: REST (default) or the stream's socket (`StreamClient.sender`). */
export interface DeskVia {
  sender?: Sender;
}

function checkSize(n: number): void {
  if (n < 1 || n > MAX_BATCH_ITEMS) throw new RangeError(`a batch holds 1..${MAX_BATCH_ITEMS} items (got ${n})`);
}

/** Sends signed items as one batch (`POST /v1/orders/batch`). Never retried: a lost answer may hide sent items. */
export async function sendBatch<R = PlaceOutcome | CancelOutcome>(client: GatewayClient, items: SignedItem[], options: BatchOptions & DeskVia = {}): Promise<BatchResult<R>> {
  checkSize(items.length);
  const session = sessionOf(client, 'a batch');
  const body = { user: session.party, sessionId: session.sessionId, ...(options.mode ? { mode: options.mode } : {}), ...(options.stopOnFailure ? { stopOnFailure: true } : {}), items };
  return client.transport.call({ method: 'POST', path: '/v1/orders/batch', body, retries: 0, ...(options.sender ? { sender: options.sender } : {}) });
}

/** Places up to 50 orders in one call; every order's outcome, in order. */
export async function placeOrders<const M extends string>(client: GatewayClient, orders: readonly OrderRequest<M>[], options: BatchOptions & DeskVia = {}): Promise<BatchResult<PlaceOutcome>> {
  checkSize(orders.length);
  const session = sessionOf(client, 'placeOrders');
  const items: SignedItem[] = [];
  for (const order of orders) items.push(await signPlace(session, order));
  return sendBatch<PlaceOutcome>(client, items, options);
}

/** Cancels up to 50 orders in one call; every cancel's outcome, in order. */
export async function cancelOrders(client: GatewayClient, orderIds: readonly string[], options: BatchOptions & DeskVia = {}): Promise<BatchResult<CancelOutcome>> {
  checkSize(orderIds.length);
  const session = sessionOf(client, 'cancelOrders');
  const items: SignedItem[] = [];
  for (const id of orderIds) items.push(await signCancel(session, id));
  return sendBatch<CancelOutcome>(client, items, options);
}

/**
 * Cancels `orderId` and places `order` in its stead, in one call: the gateway sends the place only
 * once the engine confirmed the cancel, so both are never live. When the order had already filled
 * the cancel answers `order_not_open` and the place is `skipped`.
 */
export async function replaceOrder<const M extends string>(client: GatewayClient, orderId: string, order: OrderRequest<M>, options: DeskVia = {}): Promise<ReplaceResult> {
  const session = sessionOf(client, 'replaceOrder');
  const cancel = await signCancel(session, orderId);
  const place = await signPlace(session, order);
  const body = { user: session.party, sessionId: session.sessionId, cancel: { orderId, sig: cancel.sig }, place: { body: place.body, sig: place.sig } };
  return client.transport.call({ method: 'POST', path: '/v1/orders/replace', body, retries: 0, ...(options.sender ? { sender: options.sender } : {}) });
}

/** An order found by its client order id (GET /v1/users/:party/orders/by-client-id/:id). */
export interface ClientOrder {
  /** live: as the engine's events last told it; mirror: the database mirror (may lag). */
  /** claim: a place of the id is on its way through a gateway (status `pending` until `settlesBy`), or the order the engine answered for it. */
  source: 'live' | 'claim' | 'mirror';
  /** With status `pending`: when the gateway settles it at the latest (then the order, or null: never placed). */
  settlesBy?: string;
  order: {
    clientOrderId: string;
    orderId: string | null;
    status: 'open' | 'partially_filled' | 'filled' | 'cancelled' | 'rejected' | 'pending';
    market?: string | null;
    filledSize?: string;
    [field: string]: unknown;
  };
}

/**
 * The session party's order placed with `clientOrderId`, or null when the gateway knows none. After
 * a timeout the order is `pending` (source `claim`) until the gateway settles it, by `settlesBy` at
 * the latest: then the order, or null (the engine never placed it: placing it again places it; while
 * pending a place is refused `duplicate_client_order_id` with the same pending order).
 */
export async function orderByClientId(client: GatewayClient, clientOrderId: string): Promise<ClientOrder | null> {
  const session = sessionOf(client, 'orderByClientId');
  try {
    return await client.transport.call<ClientOrder>({ method: 'GET', path: `/v1/users/${encodeURIComponent(session.party)}/orders/by-client-id/${encodeURIComponent(clientOrderId)}`, signed: true });
  } catch (err) {
    if (err instanceof GatewayError && err.status === 404) return null;
    throw err;
  }
}

/** An open order as the client knows it: from the user channel (UserOrdersStore.open()) or the engine (getUserMe().openOrders). */
export interface OpenOrderRef {
  orderId: string | null;
  market: string | null;
  status?: string;
}

export interface CancelAllOptions extends DeskVia {
  /** Only this market's orders (default: every market). */
  market?: string;
  /**
   * The open orders to cancel, as the client knows them (the user channel's store, kept live by
   * `order.update`). Without it they are read from the engine (`getUserMe`, signed), which is exact
   * but costs a call.
   */
  orders?: Iterable<OpenOrderRef>;
}

export interface CancelAllResult {
  /** The orders a cancel was signed and sent for, in the order of `results`. */
  orderIds: string[];
  /** One outcome per order (batches of 50, concatenated). */
  results: CancelOutcome[];
  /** Sum of the batches' weights. */
  weight: number;
}

/**
 * Cancels the party's open orders (of one market, or all): the client signs one cancel per order
 * and sends them as batches of up to 50 (docs/trading.md "Batches"). The gateway holds no key, so
 * it can only carry the cancels this client signs; an order placed after the list was read is not
 * in it (read the outcome, and call again if orders keep arriving).
 */
export async function cancelAll(client: GatewayClient, options: CancelAllOptions = {}): Promise<CancelAllResult> {
  let orders: Iterable<OpenOrderRef>;
  if (options.orders) {
    orders = options.orders;
  } else {
    const me = await client.getUserMe();
    if (!me.ok) throw new GatewayError(200, '/v1/user/me', { error: me.error, code: me.code });
    orders = me.openOrders;
  }
  const ids: string[] = [];
  for (const o of orders) {
    if (o.orderId === null) continue;
    if (options.market !== undefined && o.market !== options.market) continue;
    if (o.status !== undefined && o.status !== 'open' && o.status !== 'partially_filled') continue;
    if (!ids.includes(o.orderId)) ids.push(o.orderId);
  }
  const result: CancelAllResult = { orderIds: ids, results: [], weight: 0 };
  for (let i = 0; i < ids.length; i += MAX_BATCH_ITEMS) {
    const batch = await cancelOrders(client, ids.slice(i, i + MAX_BATCH_ITEMS), options.sender ? { sender: options.sender } : {});
    result.results.push(...batch.results);
    result.weight += batch.weight;
  }
  return result;
}
