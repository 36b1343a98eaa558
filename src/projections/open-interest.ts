// Open interest per market, kept from fill legs (docs/stream.md "Open interest"): the size held
// long by the open position epochs of the market, the same figure GET /v1/markets reads from the
// mirror (src/db/queries/open-interest.ts). A leg carries its epoch's signed size after the leg,
// so each epoch's long size is set, never added: applying a leg twice, or a leg the seed already
// holds, changes nothing. Exact: scaled BigInt decimals throughout (src/decimal.ts).
import { formatDecimal, parseDecimal } from '../decimal.js';
import type { FillPayload } from './types.js';

/** One open long epoch of the seed (the mirror's `positions` with status open and size > 0). */
export interface OpenLongRow {
  market: string;
  positionId: string;
  size: string;
}

export class OpenInterestBook {
  /** market → positionId → long size (only epochs with a positive size are held). */
  private readonly longs = new Map<string, Map<string, bigint>>();
  private readonly totals = new Map<string, bigint>();

  /** Replaces everything with the seed's open long epochs. */
  seed(rows: readonly OpenLongRow[]): void {
    this.reset();
    for (const r of rows) this.set(r.market, r.positionId, parseDecimal(r.size));
  }

  /** Applies one fill's legs in their order; true when the market's open interest changed. */
  apply(market: string, fill: FillPayload): boolean {
    const before = this.totals.get(market) ?? 0n;
    for (const leg of fill.legs) this.set(market, leg.positionId, parseDecimal(leg.positionSize));
    return (this.totals.get(market) ?? 0n) !== before;
  }

  /** The market's open interest, a 10-place decimal ("0.0000000000" when nobody holds it). */
  value(market: string): string {
    return formatDecimal(this.totals.get(market) ?? 0n);
  }

  /** The markets with an open long epoch. */
  markets(): string[] {
    return [...this.totals.keys()];
  }

  reset(): void {
    this.longs.clear();
    this.totals.clear();
  }

  private set(market: string, positionId: string, size: bigint): void {
    let epochs = this.longs.get(market);
    const old = epochs?.get(positionId) ?? 0n;
    const next = size > 0n ? size : 0n;
    if (old === next) return;
    if (!epochs) this.longs.set(market, (epochs = new Map()));
    if (next === 0n) epochs.delete(positionId);
    else epochs.set(positionId, next);
    const total = (this.totals.get(market) ?? 0n) - old + next;
    if (epochs.size === 0) {
      this.longs.delete(market);
      this.totals.delete(market);
    } else this.totals.set(market, total);
  }
}
