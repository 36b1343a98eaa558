import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { initialCandles, projectCandles, seedCandles } from '../../../src/projections/candles.js';
import { parseDecimal } from '../../../src/decimal.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';
import type { Frame } from '../../../src/contracts/frame.js';
import { simpleMatch, tick } from './fixtures.js';

function run(events: EngineEvent[]): Frame[] {
  const state = initialCandles();
  return events.flatMap((e) => projectCandles(state, e).frames);
}

describe('candles', () => {
  it('updates per match with exact OHLCV, closes the 1m bucket once when engine time reaches its end', () => {
    const frames = run([
      simpleMatch(1, '2026-11-21T10:00:05.000Z', '100', '1'),
      simpleMatch(2, '2026-11-21T10:00:20.000Z', '103.5', '0.25'),
      simpleMatch(3, '2026-11-21T10:00:59.999Z', '99', '2'),
      tick(4, '2026-11-21T10:01:00.000Z'),
      tick(5, '2026-11-21T10:01:30.000Z'),
    ]);
    const closes = frames.filter((f) => f.kind === 'candle.close');
    expect(closes).toEqual([
      {
        kind: 'candle.close',
        seq: 4,
        ts: '2026-11-21T10:01:00.000Z',
        market: 'BTC-PERP',
        interval: '1m',
        payload: {
          openTs: '2026-11-21T10:00:00.000Z',
          closeTs: '2026-11-21T10:01:00.000Z',
          open: '100.0000000000',
          high: '103.5000000000',
          low: '99.0000000000',
          close: '99.0000000000',
          volume: '3.2500000000',
          trades: 3,
        },
      },
    ]);
    const updates = frames.filter((f) => f.kind === 'candle.update');
    expect(updates).toHaveLength(24);
    expect(updates.filter((f) => f.interval === '1d').map((f) => f.payload.trades)).toEqual([1, 2, 3]);
    expect(updates.find((f) => f.interval === '4h')!.payload).toMatchObject({ openTs: '2026-11-21T08:00:00.000Z', closeTs: '2026-11-21T12:00:00.000Z' });
  });

  it('closes every due interval on one late event, and never closes a bucket twice', () => {
    const frames = run([
      simpleMatch(1, '2026-11-21T23:59:00.000Z', '100', '1'),
      tick(2, '2026-11-22T00:00:00.000Z'),
      tick(3, '2026-11-22T00:00:01.000Z'),
      simpleMatch(4, '2026-11-22T00:00:02.000Z', '101', '1'),
    ]);
    const closes = frames.filter((f) => f.kind === 'candle.close');
    expect(closes.map((f) => [f.seq, f.interval, f.payload.openTs])).toEqual([
      [2, '1m', '2026-11-21T23:59:00.000Z'],
      [2, '5m', '2026-11-21T23:55:00.000Z'],
      [2, '15m', '2026-11-21T23:45:00.000Z'],
      [2, '30m', '2026-11-21T23:30:00.000Z'],
      [2, '1h', '2026-11-21T23:00:00.000Z'],
      [2, '4h', '2026-11-21T20:00:00.000Z'],
      [2, '1d', '2026-11-21T00:00:00.000Z'],
      // The week (Monday 2026-11-16 00:00 UTC) runs on: it closes on Monday the 23rd.
    ]);
    // The match after the boundary opens fresh buckets whose open is its own price.
    const after = frames.filter((f) => f.kind === 'candle.update' && f.seq === 4);
    expect(after.filter((f) => f.interval !== '1w').every((f) => f.payload.open === '101.0000000000' && f.payload.trades === 1)).toBe(true);
    // …the week's bucket is still the one of both matches, opened at the first one's price.
    expect(after.find((f) => f.interval === '1w')!.payload).toMatchObject({ openTs: '2026-11-16T00:00:00.000Z', open: '100.0000000000', trades: 2 });
  });

  it('keeps markets apart', () => {
    const frames = run([simpleMatch(1, '2026-11-21T10:00:05.000Z', '100', '1'), simpleMatch(2, '2026-11-21T10:00:06.000Z', '7', '3', 'ETH-PERP')]);
    const eth = frames.filter((f) => f.market === 'ETH-PERP' && f.interval === '1m');
    expect(eth.map((f) => f.payload)).toEqual([
      expect.objectContaining({ open: '7.0000000000', high: '7.0000000000', volume: '3.0000000000', trades: 1 }),
    ]);
  });

  it('seeds the open buckets from stored matches and closes those engine time already ended', () => {
    const t = (iso: string) => Date.parse(iso);
    const state = seedCandles(
      [
        { market: 'BTC-PERP', tsMs: t('2026-11-21T10:00:05.000Z'), price: parseDecimal('100'), size: parseDecimal('1') },
        { market: 'BTC-PERP', tsMs: t('2026-11-21T10:02:05.000Z'), price: parseDecimal('110'), size: parseDecimal('2') },
      ],
      t('2026-11-21T10:03:00.000Z'),
    );
    const frames = projectCandles(state, simpleMatch(9, '2026-11-21T10:03:10.000Z', '105', '1')).frames;
    // 10:02 bucket closed silently at "now" 10:03; the 5m bucket carries all three matches.
    expect(frames.filter((f) => f.kind === 'candle.close')).toEqual([]);
    expect(frames.find((f) => f.interval === '5m')!.payload).toMatchObject({
      open: '100.0000000000',
      high: '110.0000000000',
      low: '100.0000000000',
      close: '105.0000000000',
      volume: '4.0000000000',
      trades: 3,
    });
    expect(frames.find((f) => f.interval === '1m')!.payload).toMatchObject({ openTs: '2026-11-21T10:03:00.000Z', trades: 1 });
  });

  it('property: for any event sequence, each bucket closes at most once, after its end, with the totals of its matches', () => {
    const base = Date.parse('2026-11-21T00:00:00.000Z');
    const step = fc.record({
      dtMs: fc.integer({ min: 0, max: 400_000 }),
      isFill: fc.boolean(),
      market: fc.constantFrom('BTC-PERP', 'ETH-PERP'),
      price: fc.integer({ min: 1, max: 1_000_000 }),
      size: fc.integer({ min: 1, max: 1_000 }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 120 }), (steps) => {
        let t = base;
        const events = steps.map((s, i) => {
          t += s.dtMs;
          const ts = new Date(t).toISOString();
          return s.isFill ? simpleMatch(i + 1, ts, `${s.price / 100}`, `${s.size / 10}`, s.market) : tick(i + 1, ts);
        });
        const frames = run(events);
        const closed = new Set<string>();
        // expected totals per bucket, from the inputs
        const expected = new Map<string, { trades: number; volume: bigint }>();
        for (const [i, s] of steps.entries()) {
          if (!s.isFill) continue;
          const ms = Date.parse(events[i]!.ts);
          for (const [iv, len] of [['1m', 60_000], ['1h', 3_600_000]] as const) {
            const key = `${s.market}|${iv}|${new Date(Math.floor(ms / len) * len).toISOString()}`;
            const e = expected.get(key) ?? { trades: 0, volume: 0n };
            e.trades += 1;
            e.volume += parseDecimal(`${s.size / 10}`);
            expected.set(key, e);
          }
        }
        for (const f of frames.filter((x) => x.kind === 'candle.close')) {
          const key = `${f.market}|${f.interval}|${f.payload.openTs}`;
          expect(closed.has(key)).toBe(false);
          closed.add(key);
          expect(Date.parse(f.ts)).toBeGreaterThanOrEqual(Date.parse(f.payload.closeTs as string));
          const e = expected.get(key);
          if (e) {
            expect(f.payload.trades).toBe(e.trades);
            expect(parseDecimal(f.payload.volume as string)).toBe(e.volume);
          }
        }
        // every bucket whose end engine time passed was closed
        const lastMs = t;
        for (const key of expected.keys()) {
          const [, iv, openTs] = key.split('|');
          const len = iv === '1m' ? 60_000 : 3_600_000;
          if (Date.parse(openTs!) + len <= lastMs) expect(closed.has(key)).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});
