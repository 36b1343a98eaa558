// The account view (GET /v1/users/:party/account, account.update) and the arithmetic a front end
// needs before it sends an order: the margin the order needs and whether it fits (the engine's own
// rule: the initial margin of the opening part, notional / maxLeverage, must fit the free
// collateral), and whether a take-profit or stop-loss would fire on the current price.
// Exact decimals (BigInt at 10 places, as the gateway), never floats.
import type { Account, AccountUpdateFrame } from './generated/wire.js';

export type { Account, AccountUpdateFrame };
export type AccountPosition = Account['positions'][number];
export type AccountOrder = Account['orders'][number];

const SCALE = 10_000_000_000n;
const DECIMAL = /^(-?)(\d+)(?:\.(\d{1,10}))?$/;

/** A decimal string with 0..10 places as 10^-10 units; throws a RangeError naming the field otherwise. */
export function toUnits(text: string, field = 'value'): bigint {
  const m = typeof text === 'string' ? DECIMAL.exec(text) : null;
  if (!m) throw new RangeError(`${field} must be a decimal string with at most 10 places, e.g. "0.5" (got ${JSON.stringify(text)})`);
  const units = BigInt(m[2]!) * SCALE + BigInt((m[3] ?? '').padEnd(10, '0'));
  return m[1] === '-' ? -units : units;
}

/** 10^-10 units as the wire's 10-place decimal string. */
export function fromUnits(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  return `${negative ? '-' : ''}${abs / SCALE}.${(abs % SCALE).toString().padStart(10, '0')}`;
}

/** n ÷ d rounded half away from zero (the engine's rounding). */
export function divRound(n: bigint, d: bigint): bigint {
  const negative = n < 0n !== d < 0n;
  const a = n < 0n ? -n : n;
  const b = d < 0n ? -d : d;
  const q = (a + b / 2n) / b;
  return negative ? -q : q;
}
const mul = (a: bigint, b: bigint): bigint => divRound(a * b, SCALE);

export interface OrderMarginInput {
  market: string;
  side: 'buy' | 'sell';
  size: string;
  /** The limit price; for a market order the price it is expected to fill at (best opposite, else last trade). */
  price: string;
  reduceOnly?: boolean;
}

export interface OrderMargin {
  /** The part of the order that opens or increases a position (the rest closes). */
  opening: string;
  /** opening × price. */
  notional: string;
  /** The initial margin the engine requires: notional / maxLeverage. */
  margin: string;
  /** The account's free collateral now. */
  freeCollateral: string;
  /** margin ≤ freeCollateral: the engine's margin check passes (other checks — grid, minimum notional — aside). */
  fits: boolean;
  /** Account leverage if the order filled at `price` (Σ notional / equity); null when equity ≤ 0. */
  leverageAfter: string | null;
}

/**
 * The margin an order needs and whether it fits, from the account view and the market's
 * maxLeverage (GET /v1/markets). The same arithmetic as the engine's `insufficient_margin` check.
 */
export function orderMargin(account: Pick<Account, 'positions' | 'freeCollateral' | 'equity'>, maxLeverage: number, order: OrderMarginInput): OrderMargin {
  const size = toUnits(order.size, 'size');
  const price = toUnits(order.price, 'price');
  const position = toUnits(account.positions.find((p) => p.market === order.market)?.size ?? '0', 'position size');
  const closable = order.side === 'buy' ? (position < 0n ? -position : 0n) : position > 0n ? position : 0n;
  const opening = order.reduceOnly ? 0n : size > closable ? size - closable : 0n;
  const notional = mul(opening, price);
  const margin = divRound(notional, BigInt(maxLeverage));
  const free = toUnits(account.freeCollateral, 'freeCollateral');
  // Exposure after the fill: the other markets at their marks, this one at the new size × price.
  let exposure = 0n;
  for (const p of account.positions) if (p.market !== order.market) exposure += toUnits(p.notional);
  const after = position + (order.side === 'buy' ? size : -size);
  exposure += mul(after < 0n ? -after : after, price);
  const equity = toUnits(account.equity, 'equity');
  return {
    opening: fromUnits(opening),
    notional: fromUnits(notional),
    margin: fromUnits(margin),
    freeCollateral: fromUnits(free),
    fits: margin <= free,
    leverageAfter: exposure === 0n ? fromUnits(0n) : equity > 0n ? fromUnits(divRound(exposure * SCALE, equity)) : null,
  };
}

/**
 * Whether a take-profit or stop-loss on a position would fire on the current price. The engine
 * fires a trigger when the last trade price crosses its trigger price, so a TP at or below the
 * price of a long (above, for a short) or an SL at or above it (below, for a short) closes the
 * position on the next trade.
 */
export function triggerWouldFire(kind: 'tp' | 'sl', positionSide: 'long' | 'short', triggerPrice: string, currentPrice: string): boolean {
  const trigger = toUnits(triggerPrice, 'triggerPrice');
  const price = toUnits(currentPrice, 'currentPrice');
  const profitAbove = positionSide === 'long';
  if (kind === 'tp') return profitAbove ? trigger <= price : trigger >= price;
  return profitAbove ? trigger >= price : trigger <= price;
}

/** The client's refusal of a TP/SL that would fire at once (returned as a value, nothing signed or sent). */
export interface TriggerWouldFire {
  ok: false;
  code: 'trigger_would_fire';
  error: string;
  leg: 'tp' | 'sl';
  triggerPrice: string;
  /** The price it was judged against: the order's limit price, or the market's mark (last trade). */
  currentPrice: string;
}

export interface TriggerCheck {
  /** Send a TP/SL even when it would fire on the current price (default false: refused as a value). */
  allowImmediateTrigger?: boolean;
}

export function isTriggerWouldFire(v: unknown): v is TriggerWouldFire {
  return typeof v === 'object' && v !== null && (v as { code?: unknown }).code === 'trigger_would_fire';
}

function refusal(leg: 'tp' | 'sl', side: 'long' | 'short', triggerPrice: string, currentPrice: string): TriggerWouldFire {
  const what = leg === 'tp' ? 'take-profit' : 'stop-loss';
  return {
    ok: false,
    code: 'trigger_would_fire',
    error: `${what} at ${triggerPrice} on a ${side} would fire at once on the current price ${currentPrice}; pass { allowImmediateTrigger: true } if that is meant`,
    leg,
    triggerPrice,
    currentPrice,
  };
}

type Legs = { tp?: { triggerPrice: string } | null | undefined; sl?: { triggerPrice: string } | null | undefined };

/** The first leg of `legs` that would fire on `currentPrice` for a position on `side`, as a refusal. */
export function legsWouldFire(legs: Legs, side: 'long' | 'short', currentPrice: string): TriggerWouldFire | null {
  for (const leg of ['tp', 'sl'] as const) {
    const l = legs[leg];
    if (l && triggerWouldFire(leg, side, l.triggerPrice, currentPrice)) return refusal(leg, side, l.triggerPrice, currentPrice);
  }
  return null;
}

/** TP/SL attached to an order: judged against the order's limit price (the position it opens is on the order's side). */
export function attachedWouldFire(order: Legs & { side: 'buy' | 'sell'; price?: string | undefined }): TriggerWouldFire | null {
  if (order.price === undefined) return null; // a market order: no price known before it fills
  return legsWouldFire(order, order.side === 'buy' ? 'long' : 'short', order.price);
}

/** TP/SL on the open position of `market`: judged against its mark price (or `currentPrice`). */
export function tpslWouldFire(request: Legs & { market: string }, account: Pick<Account, 'positions'>, currentPrice?: string): TriggerWouldFire | null {
  const position = account.positions.find((p) => p.market === request.market);
  if (!position) return null; // the engine answers no_position
  return legsWouldFire(request, position.size.startsWith('-') ? 'short' : 'long', currentPrice ?? position.markPrice);
}
