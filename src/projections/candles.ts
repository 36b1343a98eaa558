// OHLCV candles per market and interval (docs/stream.md "Frames").
//
// Time is engine time only: the `ts` of the event being reduced. Buckets are UTC-aligned
// (floor(ts / length) * length; the Unix epoch is a UTC midnight, so 4h and 1d align to UTC too; weeks
// start on Mondays 00:00 UTC: INTERVAL_ORIGIN_MS).
// A bucket closes, with exactly one candle.close, when the ts of ANY later event reaches its end,
// so bars close on time without trades (engine.tick_start). A closed bucket is gone from the state,
// so it can never close twice; a late fill whose ts is before its market's open bucket (an engine
// clock step back) is counted in the open bucket rather than reopening a closed one.
//
// The reducer updates `state` in place and returns it (no copies at 100 000 events/s); it has no
// I/O and reads no clock, so the same events always give the same frames.
import { formatDecimal, normalizeDecimal, parseDecimal } from '../decimal.js';
import { asFill } from './fill.js';
import { type EngineEvent } from '../contracts/engine-event.js';
import { CANDLE_INTERVALS, type CandleInterval, type Frame } from '../contracts/frame.js';

export const INTERVAL_MS: Record<CandleInterval, number> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '30m': 1_800_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
  '1w': 604_800_000,
};

/**
 * Where an interval's buckets start counting (ms since the epoch): the epoch for all but the week,
 * whose buckets start on Mondays 00:00 UTC as exchanges' weekly bars do (1970-01-01 was a Thursday;
 * 1970-01-05 is the first Monday).
 */
export const INTERVAL_ORIGIN_MS: Record<CandleInterval, number> = { '1m': 0, '5m': 0, '15m': 0, '30m': 0, '1h': 0, '4h': 0, '1d': 0, '1w': 345_600_000 };

/** The start of the bucket of `interval` holding `ms`. */
export function bucketStart(ms: number, interval: CandleInterval): number {
  const len = INTERVAL_MS[interval];
  const origin = INTERVAL_ORIGIN_MS[interval];
  return Math.floor((ms - origin) / len) * len + origin;
}

export interface Bucket {
  openMs: number;
  closeMs: number;
  high: bigint;
  low: bigint;
  volume: bigint;
  trades: number;
  // Wire strings kept next to the numbers: a bucket is sent after every match (hot path).
  openTs: string;
  closeTs: string;
  openText: string;
  highText: string;
  lowText: string;
  closeText: string;
  /** Seq and engine time of the bucket's latest match: what a snapshot of the open bar is current as of. */
  lastSeq: number;
  lastTsMs: number;
}

export interface CandlesState {
  /** market → interval → open bucket. */
  open: Map<string, Map<CandleInterval, Bucket>>;
  /** Earliest closeMs of any open bucket (Infinity when none): most events close nothing. */
  nextCloseMs: number;
}

export function initialCandles(): CandlesState {
  return { open: new Map(), nextCloseMs: Infinity };
}

/** A match as the candles see it: from an order_filled event, or rebuilt from the fills table. */
export interface CandleTrade {
  market: string;
  tsMs: number;
  price: bigint;
  size: bigint;
  /** price in wire form, when the caller has it (else formatted here). */
  priceText?: string;
  /** Seq of the match (0 when unknown). */
  seq?: number;
}

export function bucketPayload(b: Bucket): Record<string, unknown> {
  return {
    openTs: b.openTs,
    closeTs: b.closeTs,
    open: b.openText,
    high: b.highText,
    low: b.lowText,
    close: b.closeText,
    volume: formatDecimal(b.volume),
    trades: b.trades,
  };
}

/** Closes every bucket whose end is at or before `tsMs`; returns [market, interval, bucket] in a stable order. */
export function closeDue(state: CandlesState, tsMs: number): Array<[string, CandleInterval, Bucket]> {
  if (tsMs < state.nextCloseMs) return [];
  const closed: Array<[string, CandleInterval, Bucket]> = [];
  let next = Infinity;
  for (const [market, byInterval] of state.open) {
    for (const interval of CANDLE_INTERVALS) {
      const b = byInterval.get(interval);
      if (!b) continue;
      if (b.closeMs <= tsMs) {
        closed.push([market, interval, b]);
        byInterval.delete(interval);
      } else if (b.closeMs < next) next = b.closeMs;
    }
    if (byInterval.size === 0) state.open.delete(market);
  }
  state.nextCloseMs = next;
  return closed;
}

/** Adds one match to the open bucket of every interval; returns the updated buckets. */
export function addTrade(state: CandlesState, trade: CandleTrade): Array<[CandleInterval, Bucket]> {
  let byInterval = state.open.get(trade.market);
  if (!byInterval) {
    byInterval = new Map();
    state.open.set(trade.market, byInterval);
  }
  const updated: Array<[CandleInterval, Bucket]> = [];
  const text = trade.priceText ?? formatDecimal(trade.price);
  for (const interval of CANDLE_INTERVALS) {
    let b = byInterval.get(interval);
    if (!b) {
      const len = INTERVAL_MS[interval];
      const openMs = bucketStart(trade.tsMs, interval);
      b = {
        openMs,
        closeMs: openMs + len,
        high: trade.price,
        low: trade.price,
        volume: 0n,
        trades: 0,
        openTs: new Date(openMs).toISOString(),
        closeTs: new Date(openMs + len).toISOString(),
        openText: text,
        highText: text,
        lowText: text,
        closeText: text,
        lastSeq: 0,
        lastTsMs: trade.tsMs,
      };
      byInterval.set(interval, b);
      if (b.closeMs < state.nextCloseMs) state.nextCloseMs = b.closeMs;
    }
    if (trade.price > b.high) {
      b.high = trade.price;
      b.highText = text;
    }
    if (trade.price < b.low) {
      b.low = trade.price;
      b.lowText = text;
    }
    b.closeText = text;
    b.lastSeq = Math.max(b.lastSeq, trade.seq ?? 0);
    b.lastTsMs = Math.max(b.lastTsMs, trade.tsMs);
    b.volume += trade.size;
    b.trades += 1;
    updated.push([interval, b]);
  }
  return updated;
}

export function projectCandles(state: CandlesState, event: EngineEvent, fill = asFill(event)): { state: CandlesState; frames: Frame[] } {
  const tsMs = Date.parse(event.ts);
  if (!Number.isFinite(tsMs)) return { state, frames: [] };
  const frames: Frame[] = [];
  for (const [market, interval, b] of closeDue(state, tsMs)) {
    frames.push({ kind: 'candle.close', seq: event.seq, ts: event.ts, market, interval, payload: bucketPayload(b) });
  }
  if (fill) {
    const trade: CandleTrade = {
      market: event.market!,
      tsMs,
      price: parseDecimal(fill.price),
      size: parseDecimal(fill.size),
      priceText: normalizeDecimal(fill.price),
      seq: event.seq,
    };
    for (const [interval, b] of addTrade(state, trade)) {
      frames.push({ kind: 'candle.update', seq: event.seq, ts: event.ts, market: trade.market, interval, payload: bucketPayload(b) });
    }
  }
  return { state, frames };
}

/**
 * Rebuilds the open buckets at start from matches already in the database (oldest first), then
 * closes what engine time `nowMs` (the newest event's ts) has already ended. Frames are dropped:
 * those bars were live before this process existed.
 */
export function seedCandles(trades: Iterable<CandleTrade>, nowMs: number): CandlesState {
  const state = initialCandles();
  for (const t of trades) {
    closeDue(state, t.tsMs);
    addTrade(state, t);
  }
  closeDue(state, nowMs);
  return state;
}
