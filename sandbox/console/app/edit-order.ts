// What "Edit price" sends as the replacement of a resting order: the same order at a new price, for
// what is left of it. It is built from the engine's own record of the order (`/v1/user/me`), read
// at the moment of the edit, not from the user channel: an `order.update` frame carries no time in
// force, reduce-only or attached TP/SL, and an edit that silently turned a post-only (alo) or
// reduce-only quote into a plain GTC limit could take liquidity or open a position the trader never
// asked for. The engine's record also gives the exact remaining size at that moment.
import type { EngineOrder, LimitOrderRequest } from '@gateway/client';

/** size − filled, as a decimal string (the engine writes both with exactly 10 places); null when nothing is left. */
export function remainingSize(o: Pick<EngineOrder, 'size' | 'filledSize'>): string | null {
  const left = BigInt(o.size.replace('.', '')) - BigInt(o.filledSize.replace('.', ''));
  if (left <= 0n) return null;
  const text = left.toString().padStart(11, '0');
  return `${text.slice(0, -10)}.${text.slice(-10)}`;
}

const ZERO = /^0(\.0+)?$/;

/**
 * The replacement of `o` at `price`: same market, side, time in force and reduce-only, for its
 * remaining size. Its attached TP/SL are carried only while the order has no fill: the engine arms
 * them at the first fill (then they live on the position and need no copy), and abandons unarmed
 * ones with the cancel. Null when nothing is left to replace.
 */
export function replacementOf(o: EngineOrder, price: string): LimitOrderRequest | null {
  const size = remainingSize(o);
  if (size === null || o.type !== 'limit') return null;
  const unfilled = ZERO.test(o.filledSize);
  const leg = (l: EngineOrder['tp']) =>
    l === null ? undefined : { triggerPrice: l.triggerPrice, ...(l.limitPrice !== null ? { limitPrice: l.limitPrice } : {}), ...(l.size !== null ? { size: l.size } : {}) };
  const tp = unfilled ? leg(o.tp) : undefined;
  const sl = unfilled ? leg(o.sl) : undefined;
  return {
    market: o.market,
    side: o.side,
    type: 'limit',
    size,
    price,
    tif: o.tif,
    ...(o.reduceOnly ? { reduceOnly: true } : {}),
    ...(tp ? { tp } : {}),
    ...(sl ? { sl } : {}),
  };
}
