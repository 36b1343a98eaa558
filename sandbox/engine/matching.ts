/**
 * Order placement, price-time matching, cancels, attached TP/SL resolution and trigger firing.
 *
 * Event order for one order request:
 *   inbound.order → (engine.order_rejected | engine.order_placed → engine.order_filled* →
 *   [trigger cancels of closed epochs, attached arming, reduce-only clean-up after each fill] →
 *   engine.order_cancelled (ioc/market remainder) → attached abandoned) → triggers fired by the
 *   new last trade price (each: engine.trigger_fired, then its reduce-only order's events).
 */
import { abs, formatDec, max, min, mul, parseDec } from './decimal.js';
import { Accounts, initialMargin, MAKER_FEE_RATE, TAKER_FEE_RATE, type LegOutcome } from './accounts.js';
import type { AppendInput } from './event-log.js';
import type { IdSource } from './ids.js';
import { priceOnGrid, sizeOnGrid, type Market, type MarketRegistry } from './markets.js';
import type { OrderBook } from './orderbook.js';
import { avgPrice, isTerminal, orderToWire, type AttachedSpec, type OrderState, type OrderStore } from './orders.js';
import { triggerToWire, type TriggerState, type TriggerStore } from './triggers.js';
import { sortKeysDeep } from './commitments.js';
import {
  BadRequest,
  EngineReject,
  type CancelReason,
  type EngineEvent,
  type OrderType,
  type RejectCode,
  type Side,
  type Tif,
  type WireLeg,
} from './types.js';

export interface MatchingContext {
  markets: MarketRegistry;
  books: Map<string, OrderBook<OrderState>>;
  accounts: Accounts;
  triggers: TriggerStore;
  orders: OrderStore;
  ids: IdSource;
  lastPrice: Map<string, bigint>;
  emit(input: AppendInput): EngineEvent;
  nowIso(): string;
  /** Wire spelling of a rejection code (e.g. `0x0C` for below_min_notional in hex style). */
  code(c: RejectCode): string;
}

/** Structurally checked order request (decimals still unparsed: their errors are business rejections). */
export interface OrderRequestShape {
  market: string;
  side: Side;
  type: OrderType;
  size: unknown;
  price: unknown;
  tif: Tif | undefined;
  reduceOnly: boolean;
  clientOrderId: string | null;
  tp: Record<string, unknown> | null;
  sl: Record<string, unknown> | null;
}

export interface ValidatedOrder {
  market: Market;
  side: Side;
  type: OrderType;
  tif: Tif;
  size: bigint;
  limitPrice: bigint | null;
  reduceOnly: boolean;
  clientOrderId: string | null;
  tp: AttachedSpec | null;
  sl: AttachedSpec | null;
}

export type PlaceResponse =
  | { ok: true; orderId: string; status: string; filledSize: string; avgPrice: string | null }
  | { ok: false; code: string; error: string };

const SIDES = new Set(['buy', 'sell']);
const TYPES = new Set(['limit', 'market']);
const TIFS = new Set(['gtc', 'ioc', 'alo']);

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function attachedShape(v: unknown, name: string): Record<string, unknown> | null {
  if (v === undefined || v === null) return null;
  if (!isPlainObject(v) || !('triggerPrice' in v)) throw new BadRequest(`${name} must be an object with triggerPrice`);
  return v;
}

/** Transport-level checks: a missing field or a wrong enum value is a 400. */
export function checkOrderShape(body: unknown): OrderRequestShape {
  if (!isPlainObject(body)) throw new BadRequest('body must be a JSON object');
  const { market, side, type, size, price, tif, reduceOnly, clientOrderId } = body;
  if (typeof market !== 'string' || market.length === 0) throw new BadRequest('missing field: market');
  if (typeof side !== 'string' || !SIDES.has(side)) throw new BadRequest('side must be "buy" or "sell"');
  if (typeof type !== 'string' || !TYPES.has(type)) throw new BadRequest('type must be "limit" or "market"');
  if (size === undefined || size === null) throw new BadRequest('missing field: size');
  if (type === 'limit' && (price === undefined || price === null)) throw new BadRequest('missing field: price (required for limit orders)');
  if (tif !== undefined && (typeof tif !== 'string' || !TIFS.has(tif))) throw new BadRequest('tif must be gtc, ioc or alo');
  if (reduceOnly !== undefined && typeof reduceOnly !== 'boolean') throw new BadRequest('reduceOnly must be a boolean');
  if (clientOrderId !== undefined && clientOrderId !== null && (typeof clientOrderId !== 'string' || clientOrderId.length > 64)) {
    throw new BadRequest('clientOrderId must be a string of at most 64 characters');
  }
  return {
    market,
    side: side as Side,
    type: type as OrderType,
    size,
    price: price ?? null,
    tif: tif as Tif | undefined,
    reduceOnly: reduceOnly === true,
    clientOrderId: typeof clientOrderId === 'string' ? clientOrderId : null,
    tp: attachedShape(body.tp, 'tp'),
    sl: attachedShape(body.sl, 'sl'),
  };
}

export function opposite(side: Side): Side {
  return side === 'buy' ? 'sell' : 'buy';
}

export class Matcher {
  private firing = false;
  private readonly dirtyMarkets = new Set<string>();

  constructor(private readonly ctx: MatchingContext) {}

  /** The full order request path (after authentication). Throws BadRequest for 400s. */
  place(party: string, body: unknown): PlaceResponse {
    const req = checkOrderShape(body);
    this.ctx.emit({
      kind: 'inbound.order',
      market: req.market,
      party,
      payload: { clientOrderId: req.clientOrderId, request: sortKeysDeep(body) },
    });
    let v: ValidatedOrder;
    try {
      v = this.validate(party, req);
    } catch (e) {
      if (e instanceof EngineReject) return this.reject(party, req.market, req.clientOrderId, e);
      throw e;
    }
    return this.execute(party, v);
  }

  /** Emit engine.order_rejected and build the HTTP 200 rejection body. */
  reject(party: string, market: string | undefined, clientOrderId: string | null, e: EngineReject): PlaceResponse {
    const code = this.ctx.code(e.code);
    this.ctx.emit({ kind: 'engine.order_rejected', market, party, payload: { clientOrderId, code, error: e.message } });
    return { ok: false, code, error: e.message };
  }

  reducible(party: string, market: string, side: Side): bigint {
    const s = this.ctx.accounts.positionSize(party, market);
    if (side === 'buy') return s < 0n ? -s : 0n;
    return s > 0n ? s : 0n;
  }

  private parseAttached(a: Record<string, unknown> | null, m: Market, orderSize: bigint | null): AttachedSpec | null {
    if (!a) return null;
    const triggerPrice = parseDec(a.triggerPrice);
    if (triggerPrice === null || !priceOnGrid(m, triggerPrice)) throw new EngineReject('invalid_price', 'triggerPrice is off the price grid');
    let limitPrice: bigint | null = null;
    if (a.limitPrice !== undefined && a.limitPrice !== null) {
      limitPrice = parseDec(a.limitPrice);
      if (limitPrice === null || !priceOnGrid(m, limitPrice)) throw new EngineReject('invalid_price', 'limitPrice is off the price grid');
    }
    let size: bigint | null = orderSize;
    if (a.size !== undefined && a.size !== null) {
      size = parseDec(a.size);
      if (size === null || !sizeOnGrid(m, size)) throw new EngineReject('invalid_size', `size must be a positive multiple of ${formatDec(m.sizeStep)}`);
    }
    return { triggerPrice, limitPrice, size };
  }

  /** Business validation, in a fixed order. Throws EngineReject. */
  validate(party: string, req: OrderRequestShape): ValidatedOrder {
    const { ctx } = this;
    const m = ctx.markets.get(req.market);
    if (!m) throw new EngineReject('market_unsupported', `unknown market ${req.market}`);
    const size = parseDec(req.size);
    if (size === null || !sizeOnGrid(m, size)) {
      throw new EngineReject('invalid_size', `size must be a positive multiple of ${formatDec(m.sizeStep)}`);
    }
    let limitPrice: bigint | null = null;
    if (req.price !== null) {
      limitPrice = parseDec(req.price);
      if (limitPrice === null || !priceOnGrid(m, limitPrice)) {
        throw new EngineReject('invalid_price', `price must be positive, an integer or at most 5 significant figures, with at most ${m.maxPriceDecimals} decimals`);
      }
    }
    const tp = this.parseAttached(req.tp, m, size);
    const sl = this.parseAttached(req.sl, m, size);
    const tif: Tif = req.type === 'market' ? 'ioc' : (req.tif ?? 'gtc');
    return this.checkAdmission(party, { market: m, side: req.side, type: req.type, tif, size, limitPrice, reduceOnly: req.reduceOnly, clientOrderId: req.clientOrderId, tp, sl });
  }

  /** Checks that depend on the book and the account: alo, reduce-only, min notional, margin. */
  checkAdmission(party: string, v: ValidatedOrder): ValidatedOrder {
    const { ctx } = this;
    const m = v.market;
    const book = ctx.books.get(m.symbol)!;
    const bestOpp = book.bestPrice(opposite(v.side));
    if (v.type === 'limit' && v.tif === 'alo' && bestOpp !== undefined && v.limitPrice !== null) {
      const crosses = v.side === 'buy' ? v.limitPrice >= bestOpp : v.limitPrice <= bestOpp;
      if (crosses) throw new EngineReject('post_only_would_cross', 'post-only (alo) order would cross the book');
    }
    const closable = this.reducible(party, m.symbol, v.side);
    if (v.reduceOnly && (closable === 0n || v.size > closable)) {
      throw new EngineReject('reduce_only_violation', 'reduce-only order would open or increase a position');
    }
    const opening = v.reduceOnly ? 0n : max(0n, v.size - closable);
    if (opening > 0n) {
      const ref = v.limitPrice ?? bestOpp ?? ctx.lastPrice.get(m.symbol);
      if (ref !== undefined) {
        const notional = mul(opening, ref);
        if (notional < m.minNotionalScaled) {
          throw new EngineReject('below_min_notional', `opening notional ${formatDec(notional)} is below the minimum ${formatDec(m.minNotionalScaled)}`);
        }
        const required = initialMargin(notional, m.maxLeverage);
        const free = ctx.accounts.freeCollateral(party);
        if (required > free) {
          throw new EngineReject('insufficient_margin', `initial margin ${formatDec(required)} exceeds free collateral ${formatDec(free)}`);
        }
      }
    }
    return v;
  }

  /** Create, match, rest or cancel a validated order, then fire triggers. */
  execute(party: string, v: ValidatedOrder, orderId?: string): PlaceResponse {
    const { ctx } = this;
    const now = ctx.nowIso();
    const m = v.market;
    const o: OrderState = {
      orderId: orderId ?? ctx.ids.next('o'),
      party,
      market: m,
      side: v.side,
      type: v.type,
      tif: v.tif,
      price: v.type === 'limit' ? v.limitPrice! : 0n,
      limitPrice: v.limitPrice,
      size: v.size,
      remaining: v.size,
      filled: 0n,
      filledNotionalRaw: 0n,
      status: 'open',
      reduceOnly: v.reduceOnly,
      clientOrderId: v.clientOrderId,
      tp: v.tp,
      sl: v.sl,
      attachedIds: { tp: v.tp ? ctx.ids.next('t') : null, sl: v.sl ? ctx.ids.next('t') : null },
      attachedResolved: false,
      createdAt: now,
      updatedAt: now,
      seq: 0,
      reserved: 0n,
    };
    ctx.orders.add(o);
    const placed = ctx.emit({ kind: 'engine.order_placed', market: m.symbol, party, payload: { order: orderToWire(o) } });
    o.seq = placed.seq;

    const book = ctx.books.get(m.symbol)!;
    const traded = this.match(o, book);

    if (!isTerminal(o.status) && o.remaining > 0n) {
      if (o.type === 'market' || o.tif === 'ioc') {
        this.cancel(o, 'ioc');
      } else {
        book.add(o);
        book.seq = Math.max(book.seq, o.seq);
        const opening = o.reduceOnly ? 0n : max(0n, o.remaining - this.reducible(party, m.symbol, o.side));
        o.reserved = initialMargin(mul(opening, o.price), m.maxLeverage);
        ctx.accounts.reserve(party, o.reserved);
      }
    }
    const response: PlaceResponse = {
      ok: true,
      orderId: o.orderId,
      status: o.status,
      filledSize: formatDec(o.filled),
      avgPrice: o.filled === 0n ? null : formatDec(avgPrice(o)!),
    };
    if (traded) this.fireTriggers(m.symbol);
    return response;
  }

  /** Run the taker against the book. Returns true when at least one match happened. */
  private match(taker: OrderState, book: OrderBook<OrderState>): boolean {
    const { ctx } = this;
    const m = taker.market;
    const oppSide = opposite(taker.side);
    let traded = false;
    while (taker.remaining > 0n && !isTerminal(taker.status)) {
      const maker = book.best(oppSide);
      if (!maker) break;
      if (taker.limitPrice !== null) {
        if (taker.side === 'buy' ? maker.price > taker.limitPrice : maker.price < taker.limitPrice) break;
      }
      let qty = min(taker.remaining, maker.remaining);
      if (maker.reduceOnly) {
        const capM = this.reducible(maker.party, m.symbol, maker.side);
        if (capM === 0n) {
          this.cancel(maker, 'reduce_only');
          continue;
        }
        qty = min(qty, capM);
      }
      if (taker.reduceOnly) {
        const cap = this.reducible(taker.party, m.symbol, taker.side);
        if (cap === 0n) {
          this.cancel(taker, 'reduce_only');
          break;
        }
        qty = min(qty, cap);
      } else if (taker.type === 'market') {
        const opening = max(0n, qty - this.reducible(taker.party, m.symbol, taker.side));
        if (opening > 0n && initialMargin(mul(opening, maker.price), m.maxLeverage) > ctx.accounts.freeCollateral(taker.party)) {
          this.cancel(taker, 'margin');
          break;
        }
      }
      this.executeMatch(taker, maker, qty, book);
      traded = true;
    }
    return traded;
  }

  private executeMatch(taker: OrderState, maker: OrderState, qty: bigint, book: OrderBook<OrderState>): void {
    const { ctx } = this;
    const m = taker.market;
    const price = maker.price;
    const at = ctx.nowIso();
    const newPositionId = (): string => ctx.ids.next('p');
    const takerOut = ctx.accounts.applyFill({ party: taker.party, market: m, side: taker.side, size: qty, price, feeRate: TAKER_FEE_RATE, at, newPositionId });
    const legs: WireLeg[] = takerOut.map((l) => legToWire(taker, 'taker', price, l));
    const makerOut = ctx.accounts.applyFill({ party: maker.party, market: m, side: maker.side, size: qty, price, feeRate: MAKER_FEE_RATE, at, newPositionId });
    for (const l of makerOut) legs.push(legToWire(maker, 'maker', price, l));

    book.reduce(maker.orderId, qty); // lowers maker.remaining (and removes it at zero)
    taker.remaining -= qty;
    for (const o of [taker, maker]) {
      o.filled += qty;
      o.filledNotionalRaw += qty * price;
      o.updatedAt = at;
    }
    const matchId = ctx.ids.next('m');
    const ev = ctx.emit({
      kind: 'engine.order_filled',
      market: m.symbol,
      payload: {
        legs,
        makerOrderId: maker.orderId,
        matchId,
        price: formatDec(price),
        size: formatDec(qty),
        takerOrderId: taker.orderId,
        takerSide: taker.side,
      },
    });
    book.seq = ev.seq;
    ctx.lastPrice.set(m.symbol, price);
    for (const o of [taker, maker]) {
      o.seq = ev.seq;
      if (o.remaining === 0n) {
        o.status = 'filled';
        this.release(o);
        ctx.orders.settle(o);
      } else {
        o.status = 'partially_filled';
      }
    }
    if (maker.remaining > 0n && maker.reserved > 0n) {
      const cap = initialMargin(mul(maker.remaining, maker.price), m.maxLeverage);
      if (cap < maker.reserved) {
        ctx.accounts.reserve(maker.party, cap - maker.reserved);
        maker.reserved = cap;
      }
    }
    // Epochs closed by this match lose their armed triggers.
    for (const l of [...takerOut, ...makerOut]) {
      if (l.closedEpoch) {
        for (const t of ctx.triggers.armedForPosition(l.position.positionId, m.symbol)) this.cancelTrigger(t);
      }
    }
    this.armAttached(taker);
    if (maker !== taker) this.armAttached(maker);
    this.cleanReduceOnly(maker.party, m.symbol);
    if (taker.party !== maker.party) this.cleanReduceOnly(taker.party, m.symbol);
  }

  /** Cancel resting reduce-only orders that can no longer reduce the position. */
  private cleanReduceOnly(party: string, market: string): void {
    const book = this.ctx.books.get(market)!;
    for (const o of this.ctx.orders.openFor(party, market)) {
      if (!o.reduceOnly || !book.has(o.orderId)) continue;
      if (this.reducible(party, market, o.side) === 0n) this.cancel(o, 'reduce_only');
    }
  }

  private release(o: OrderState): void {
    if (o.reserved !== 0n) {
      this.ctx.accounts.reserve(o.party, -o.reserved);
      o.reserved = 0n;
    }
  }

  /** Cancel a non-terminal order (resting or in flight) and emit engine.order_cancelled. */
  cancel(o: OrderState, reason: CancelReason): void {
    const { ctx } = this;
    const book = ctx.books.get(o.market.symbol)!;
    const rested = book.remove(o.orderId) !== undefined;
    this.release(o);
    o.status = 'cancelled';
    o.updatedAt = ctx.nowIso();
    const ev = ctx.emit({ kind: 'engine.order_cancelled', market: o.market.symbol, party: o.party, payload: { orderId: o.orderId, reason } });
    o.seq = ev.seq;
    if (rested) book.seq = ev.seq;
    ctx.orders.settle(o);
    if (o.filled === 0n) this.abandonAttached(o);
  }

  /** DELETE /v1/orders/:orderId. */
  cancelByUser(party: string, orderId: string): { ok: true; orderId: string; status: 'cancelled' } | { ok: false; code: string; error: string } {
    const o = this.ctx.orders.get(orderId);
    if (!o || o.party !== party) return { ok: false, code: this.ctx.code('unknown_order'), error: `unknown order ${orderId}` };
    if (isTerminal(o.status)) return { ok: false, code: this.ctx.code('order_not_open'), error: `order ${orderId} is ${o.status}` };
    this.cancel(o, 'user');
    return { ok: true, orderId, status: 'cancelled' };
  }

  private armAttached(o: OrderState): void {
    if (o.attachedResolved || (!o.tp && !o.sl)) return;
    o.attachedResolved = true;
    const { ctx } = this;
    const pos = ctx.accounts.position(o.party, o.market.symbol);
    for (const kind of ['tp', 'sl'] as const) {
      const spec = o[kind];
      const triggerId = o.attachedIds[kind];
      if (!spec || !triggerId) continue;
      if (!pos) {
        ctx.emit({ kind: 'engine.attached_resolved', market: o.market.symbol, party: o.party, payload: { orderId: o.orderId, outcome: 'abandoned', triggerId } });
        continue;
      }
      const t: TriggerState = {
        triggerId,
        party: o.party,
        market: o.market.symbol,
        kind,
        status: 'armed',
        triggerPrice: spec.triggerPrice,
        limitPrice: spec.limitPrice,
        size: spec.size,
        firedSize: null,
        firedLimit: null,
        positionId: pos.positionId,
        origin: 'attached',
        parentOrderId: o.orderId,
        firedOrderId: null,
      };
      ctx.triggers.arm(t);
      ctx.emit({ kind: 'engine.trigger_set', market: t.market, party: t.party, payload: { trigger: triggerToWire(t) } });
      ctx.emit({ kind: 'engine.attached_resolved', market: t.market, party: t.party, payload: { orderId: o.orderId, outcome: 'armed', triggerId } });
    }
  }

  private abandonAttached(o: OrderState): void {
    if (o.attachedResolved || (!o.tp && !o.sl)) return;
    o.attachedResolved = true;
    for (const kind of ['tp', 'sl'] as const) {
      const triggerId = o.attachedIds[kind];
      if (!triggerId) continue;
      this.ctx.emit({ kind: 'engine.attached_resolved', market: o.market.symbol, party: o.party, payload: { orderId: o.orderId, outcome: 'abandoned', triggerId } });
    }
  }

  cancelTrigger(t: TriggerState): void {
    this.ctx.triggers.settle(t, 'cancelled');
    this.ctx.emit({ kind: 'engine.trigger_cancelled', market: t.market, party: t.party, payload: { triggerId: t.triggerId } });
  }

  /** Fire every armed trigger hit by the market's last trade price, until none is left. */
  fireTriggers(market: string): void {
    this.dirtyMarkets.add(market);
    if (this.firing) return;
    this.firing = true;
    try {
      const { ctx } = this;
      while (this.dirtyMarkets.size > 0) {
        const sym = this.dirtyMarkets.values().next().value as string;
        this.dirtyMarkets.delete(sym);
        const last = ctx.lastPrice.get(sym);
        if (last === undefined) continue;
        const due = ctx.triggers.due(sym, last, (party) => ctx.accounts.positionSize(party, sym));
        for (const t of due) {
          if (t.status !== 'armed') continue;
          const pos = ctx.accounts.position(t.party, sym);
          if (!pos || pos.positionId !== t.positionId) {
            this.cancelTrigger(t);
            continue;
          }
          const firedSize = min(t.size ?? abs(pos.size), abs(pos.size));
          const orderId = ctx.ids.next('o');
          ctx.triggers.settle(t, 'fired');
          t.firedSize = firedSize;
          t.firedLimit = t.limitPrice;
          t.firedOrderId = orderId;
          ctx.emit({
            kind: 'engine.trigger_fired',
            market: sym,
            party: t.party,
            payload: { firedLimit: t.limitPrice === null ? null : formatDec(t.limitPrice), firedSize: formatDec(firedSize), orderId, triggerId: t.triggerId },
          });
          const v: ValidatedOrder = {
            market: ctx.markets.get(sym)!,
            side: pos.size > 0n ? 'sell' : 'buy',
            type: t.limitPrice === null ? 'market' : 'limit',
            tif: t.limitPrice === null ? 'ioc' : 'gtc',
            size: firedSize,
            limitPrice: t.limitPrice,
            reduceOnly: true,
            clientOrderId: null,
            tp: null,
            sl: null,
          };
          try {
            this.checkAdmission(t.party, v);
          } catch (e) {
            if (e instanceof EngineReject) {
              this.reject(t.party, sym, null, e);
              continue;
            }
            throw e;
          }
          this.execute(t.party, v, orderId);
        }
      }
    } finally {
      this.firing = false;
    }
  }
}

function legToWire(o: OrderState, role: 'taker' | 'maker', price: bigint, l: LegOutcome): WireLeg {
  // Keys in sorted order (canonical JSON fast path).
  return {
    entryPrice: formatDec(l.position.entryPrice),
    fee: formatDec(l.fee),
    newBalance: formatDec(l.newBalance),
    orderId: o.orderId,
    party: o.party,
    positionId: l.position.positionId,
    positionSize: formatDec(l.position.size),
    price: formatDec(price),
    realizedPnl: formatDec(l.position.realizedPnl),
    role,
    side: o.side,
    size: formatDec(l.size),
  };
}
