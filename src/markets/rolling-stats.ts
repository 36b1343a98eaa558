// 24 h statistics kept up to date by small reads instead of one big one per refresh.
//
// Computing a day of matches from scratch reads every taker leg of the day (about 0.5 s of
// database time for a quarter of a million legs). Statistics over a rolling window are made of
// mergeable parts, so they are kept per market and UTC minute: the first refresh reads the full
// minutes of the window once; every later one reads only the seqs added since (the pk range above
// the last seq covered), drops the minutes that left the window, and reads the window's oldest,
// partial minute exactly (a minute of rows). The figures are those of the exact window
// [now − 24 h, now]. A mirror whose newest fill seq went back (a replaced engine history) is read
// again from scratch.
import type { Queryable } from '../db/database.js';
import { minuteStats, statsHeads, type MinuteStatsRow } from '../db/queries/markets.js';
import { parseDecimal, SCALE } from '../decimal.js';

export const WINDOW_MS = 86_400_000;
const MINUTE_MS = 60_000;

export interface MarketTotals {
  firstSeq: number;
  open: bigint;
  lastSeq: number;
  last: bigint;
  high: bigint;
  low: bigint;
  base: bigint;
  /** Σ price × size at scale 10^20 (exact). */
  quote20: bigint;
  trades: number;
}

export interface WindowStats {
  /** Markets with at least one match in the window. */
  byMarket: Map<string, MarketTotals>;
  /** Newest seq of the mirror's events when read: what the figures are current as of. */
  headSeq: number | null;
}

/** Parses a decimal with up to 20 places at scale 10^20. */
function parse20(text: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d{1,20}))?$/.exec(text);
  if (!m) throw new RangeError(`not a decimal: ${JSON.stringify(text)}`);
  const v = BigInt(m[2]!) * SCALE * SCALE + BigInt((m[3] ?? '').padEnd(20, '0'));
  return m[1] === '-' ? -v : v;
}

function fromRow(r: MinuteStatsRow): MarketTotals {
  return {
    firstSeq: Number(r.firstSeq),
    open: parseDecimal(r.open),
    lastSeq: Number(r.lastSeq),
    last: parseDecimal(r.last),
    high: parseDecimal(r.high),
    low: parseDecimal(r.low),
    base: parseDecimal(r.base),
    quote20: parse20(r.quote),
    trades: r.trades,
  };
}

/** Both parts together (they hold disjoint seqs). */
export function merge(a: MarketTotals | undefined, b: MarketTotals): MarketTotals {
  if (!a) return { ...b };
  const first = a.firstSeq <= b.firstSeq ? a : b;
  const last = a.lastSeq >= b.lastSeq ? a : b;
  return {
    firstSeq: first.firstSeq,
    open: first.open,
    lastSeq: last.lastSeq,
    last: last.last,
    high: a.high > b.high ? a.high : b.high,
    low: a.low < b.low ? a.low : b.low,
    base: a.base + b.base,
    quote20: a.quote20 + b.quote20,
    trades: a.trades + b.trades,
  };
}

export class RollingStats {
  /** minute start (ms) → market → totals of that minute's matches. */
  private minutes = new Map<number, Map<string, MarketTotals>>();
  /** The newest fill seq the minutes include; null before the first read. */
  private coveredSeq: number | null = null;

  /** Brings the minutes up to date and answers the window ending at `nowMs`. Three small statements. */
  async refresh(sql: Queryable, nowMs: number): Promise<WindowStats> {
    const fromMs = nowMs - WINDOW_MS;
    const firstFull = Math.floor(fromMs / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
    const heads = await statsHeads(sql);
    if (heads.fillsSeq === null || (this.coveredSeq !== null && heads.fillsSeq < this.coveredSeq)) {
      this.minutes.clear();
      this.coveredSeq = null;
    }
    if (heads.fillsSeq === null) return { byMarket: new Map(), headSeq: heads.eventsSeq };
    const upToSeq = heads.fillsSeq;
    const [added, edge] = await Promise.all([
      this.coveredSeq === upToSeq
        ? Promise.resolve([])
        : minuteStats(sql, {
            fromIso: new Date(firstFull).toISOString(),
            upToSeq,
            ...(this.coveredSeq !== null ? { afterSeq: this.coveredSeq } : {}),
          }),
      minuteStats(sql, { fromIso: new Date(fromMs).toISOString(), toIso: new Date(firstFull).toISOString(), upToSeq }),
    ]);
    for (const row of added) {
      const minute = new Date(row.minuteAt).getTime(); // a string, or a Date from a driver without the gateway parsers
      let byMarket = this.minutes.get(minute);
      if (!byMarket) this.minutes.set(minute, (byMarket = new Map()));
      byMarket.set(row.market, merge(byMarket.get(row.market), fromRow(row)));
    }
    this.coveredSeq = upToSeq;
    for (const minute of this.minutes.keys()) if (minute < firstFull) this.minutes.delete(minute);

    const totals = new Map<string, MarketTotals>();
    for (const row of edge) totals.set(row.market, merge(totals.get(row.market), fromRow(row)));
    for (const byMarket of this.minutes.values()) {
      for (const [market, t] of byMarket) totals.set(market, merge(totals.get(market), t));
    }
    return { byMarket: totals, headSeq: heads.eventsSeq };
  }

  /** Minutes held (at most 1 440 + 1 per market with matches). */
  get size(): number {
    return this.minutes.size;
  }
}

/** Σ price × size rounded half away from zero to 10 places (scale 10^10). */
export function roundQuote(quote20: bigint): bigint {
  const q = quote20 / SCALE;
  const r = quote20 % SCALE;
  const abs = r < 0n ? -r : r;
  return 2n * abs >= SCALE ? q + (quote20 < 0n ? -1n : 1n) : q;
}
