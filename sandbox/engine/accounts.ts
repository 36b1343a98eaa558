/**
 * Balances, position epochs, realized PnL, fees and margin.
 *
 * Balance = cash collateral. Each fill leg changes it by the leg's realized PnL minus its fee.
 * Margin used = Σ over open positions |size| × entryPrice / maxLeverage
 *             + margin reserved by resting (non reduce-only) orders.
 * Free collateral = balance − margin used (unrealized PnL is not counted).
 */
import { abs, divRound, formatDec, mul, SCALE } from './decimal.js';
import type { Market } from './markets.js';
import type { Side, WirePosition } from './types.js';

export interface PositionState {
  positionId: string;
  party: string;
  market: string;
  /** Signed: positive long, negative short. */
  size: bigint;
  entryPrice: bigint;
  realizedPnl: bigint;
  status: 'open' | 'closed';
  openedAt: string;
  closedAt: string | null;
}

/** One change of one party's position (one fill leg) and the state after it. */
export interface LegOutcome {
  size: bigint;
  fee: bigint;
  position: PositionState;
  /** Balance after the leg. */
  newBalance: bigint;
  /** True when this leg took the epoch to zero (it is then closed). */
  closedEpoch: boolean;
  /** True when this leg opened a fresh epoch. */
  openedEpoch: boolean;
}

export const TAKER_FEE_RATE = 5_000_000n; // 0.0005 at scale 10^10
export const MAKER_FEE_RATE = 0n;

/**
 * Deliberate accounting faults, for the tests that show a verifier catches them (never for a real
 * run): `fee` charges the taker 0.0006 × notional; `deposit` commits chain deposits without
 * crediting them; `entry` puts a grown position's entry price one price tick above the rule's;
 * `flip-pnl` flips the sign of the PnL realized by the closing leg of a flip through zero.
 */
export type AccountingFault = 'fee' | 'deposit' | 'entry' | 'flip-pnl';
export const ACCOUNTING_FAULTS: readonly AccountingFault[] = ['fee', 'deposit', 'entry', 'flip-pnl'];
const FAULTY_TAKER_FEE_RATE = 6_000_000n; // 0.0006

export function positionToWire(p: PositionState): WirePosition {
  return {
    positionId: p.positionId,
    party: p.party,
    market: p.market,
    size: formatDec(p.size),
    entryPrice: formatDec(p.entryPrice),
    realizedPnl: formatDec(p.realizedPnl),
    status: p.status,
    openedAt: p.openedAt,
    closedAt: p.closedAt,
  };
}

export class Accounts {
  private readonly balances = new Map<string, bigint>();
  /** party → market → open epoch. */
  private readonly open = new Map<string, Map<string, PositionState>>();
  /** party → margin reserved by resting orders. */
  private readonly reserved = new Map<string, bigint>();

  constructor(
    private readonly leverageOf: (market: string) => number,
    /** A deliberate fault (tests of verifiers only); none by default. */
    readonly fault: AccountingFault | null = null,
  ) {}

  balance(party: string): bigint {
    return this.balances.get(party) ?? 0n;
  }

  credit(party: string, amount: bigint): bigint {
    const b = this.balance(party) + amount;
    this.balances.set(party, b);
    return b;
  }

  position(party: string, market: string): PositionState | undefined {
    return this.open.get(party)?.get(market);
  }

  /** Signed size of the party's open position in `market` (0 when flat). */
  positionSize(party: string, market: string): bigint {
    return this.position(party, market)?.size ?? 0n;
  }

  openPositions(party: string): PositionState[] {
    return [...(this.open.get(party)?.values() ?? [])];
  }

  reserve(party: string, delta: bigint): void {
    if (delta === 0n) return;
    this.reserved.set(party, (this.reserved.get(party) ?? 0n) + delta);
  }

  reservedMargin(party: string): bigint {
    return this.reserved.get(party) ?? 0n;
  }

  positionMargin(party: string): bigint {
    let m = 0n;
    for (const p of this.open.get(party)?.values() ?? []) {
      m += initialMargin(mul(abs(p.size), p.entryPrice), this.leverageOf(p.market));
    }
    return m;
  }

  freeCollateral(party: string): bigint {
    return this.balance(party) - this.positionMargin(party) - this.reservedMargin(party);
  }

  /**
   * Apply one side of a match for `party`. Returns one leg, or two when the position flips
   * through zero (closing leg on the old epoch, then opening leg on a fresh epoch).
   */
  applyFill(args: {
    party: string;
    market: Market;
    side: Side;
    size: bigint;
    price: bigint;
    feeRate: bigint;
    at: string;
    newPositionId: () => string;
  }): LegOutcome[] {
    const { party, market, side, size, price, at } = args;
    const feeRate = this.fault === 'fee' && args.feeRate === TAKER_FEE_RATE ? FAULTY_TAKER_FEE_RATE : args.feeRate;
    const delta = side === 'buy' ? size : -size;
    const cur = this.position(party, market.symbol);
    const legs: LegOutcome[] = [];

    const feeFor = (q: bigint): bigint => mul(feeRate, mul(q, price));

    if (!cur) {
      legs.push(this.openEpoch(party, market.symbol, delta, price, at, args.newPositionId(), feeFor(size)));
      return legs;
    }
    const sameDirection = (cur.size > 0n) === (delta > 0n);
    if (sameDirection) {
      const oldAbs = abs(cur.size);
      cur.entryPrice = divRound(oldAbs * cur.entryPrice + size * price, oldAbs + size);
      if (this.fault === 'entry') cur.entryPrice += SCALE / 10n ** BigInt(market.maxPriceDecimals);
      cur.size += delta;
      const fee = feeFor(size);
      legs.push({ size, fee, position: cur, newBalance: this.credit(party, -fee), closedEpoch: false, openedEpoch: false });
      return legs;
    }
    // Reducing, closing or flipping.
    const closeQty = abs(cur.size) < size ? abs(cur.size) : size;
    const direction = cur.size > 0n ? 1n : -1n;
    const rulePnl = divRound((price - cur.entryPrice) * closeQty * direction, SCALE);
    const pnl = this.fault === 'flip-pnl' && closeQty < size ? -rulePnl : rulePnl;
    cur.realizedPnl += pnl;
    cur.size += direction > 0n ? -closeQty : closeQty;
    const fee1 = feeFor(closeQty);
    const closed = cur.size === 0n;
    if (closed) {
      cur.status = 'closed';
      cur.closedAt = at;
      this.open.get(party)?.delete(market.symbol);
    }
    legs.push({ size: closeQty, fee: fee1, position: cur, newBalance: this.credit(party, pnl - fee1), closedEpoch: closed, openedEpoch: false });
    const rest = size - closeQty;
    if (rest > 0n) {
      legs.push(this.openEpoch(party, market.symbol, direction > 0n ? -rest : rest, price, at, args.newPositionId(), feeFor(rest)));
    }
    return legs;
  }

  private openEpoch(party: string, market: string, signedSize: bigint, price: bigint, at: string, positionId: string, fee: bigint): LegOutcome {
    const p: PositionState = {
      positionId,
      party,
      market,
      size: signedSize,
      entryPrice: price,
      realizedPnl: 0n,
      status: 'open',
      openedAt: at,
      closedAt: null,
    };
    let byMarket = this.open.get(party);
    if (!byMarket) {
      byMarket = new Map();
      this.open.set(party, byMarket);
    }
    byMarket.set(market, p);
    return { size: abs(signedSize), fee, position: p, newBalance: this.credit(party, -fee), closedEpoch: false, openedEpoch: true };
  }
}

/** Initial margin of a notional at a market's maximum leverage. */
export function initialMargin(notional: bigint, maxLeverage: number): bigint {
  return divRound(notional, BigInt(maxLeverage));
}
