// Candle history over REST equals the live candle frames: the same matches are fed to the candle
// projection (as engine events) and to the database (as the indexer mirrors them: one fills row per
// leg, one events row per event), and every bar of GET /v1/candles must equal its frame: a closed
// bar its `candle.close` payload, the current bar the latest `candle.update`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { fill, leg, tick, A, B } from '../../unit/projections/fixtures.js';
import { initialCandles, projectCandles } from '../../../src/projections/candles.js';
import { type EngineEvent } from '../../../src/contracts/engine-event.js';
import { CANDLE_INTERVALS } from '../../../src/contracts/frame.js';
import { type FillLeg } from '../../../src/projections/types.js';

/** A small deterministic generator (LCG), so a failure replays. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const MARKETS = ['BTC-PERP', 'ETH-PERP'];
const START = Date.parse('2026-11-20T19:50:00.000Z');

/** 300 matches over ~14 h (crossing 4 h bounds and a UTC midnight), some flips (two taker legs), then a tick. */
function history(): EngineEvent[] {
  const r = rng(7);
  const events: EngineEvent[] = [];
  let ts = START;
  for (let seq = 1; seq <= 300; seq++) {
    ts += 1 + Math.floor(r() * 330_000);
    const market = MARKETS[Math.floor(r() * MARKETS.length)]!;
    const price = (100 + Math.floor(r() * 2000) / 100).toFixed(2);
    const lots = 1 + Math.floor(r() * 500);
    const size = (lots / 100).toFixed(2);
    const iso = new Date(ts).toISOString();
    const flip = lots > 1 && r() < 0.2;
    const takerLegs: FillLeg[] = flip
      ? [
          leg({ party: A, role: 'taker', side: 'buy', size: '0.01', price, positionId: `pa${seq}a`, positionSize: '0' }),
          leg({ party: A, role: 'taker', side: 'buy', size: ((lots - 1) / 100).toFixed(2), price, positionId: `pa${seq}b`, positionSize: size }),
        ]
      : [leg({ party: A, role: 'taker', side: 'buy', size, price, positionId: `pa${seq}`, positionSize: size })];
    const legs = [...takerLegs, leg({ party: B, role: 'maker', side: 'sell', size, price, positionId: `pb${seq}`, positionSize: `-${size}` })];
    events.push(fill(seq, iso, { market, price, size, takerSide: 'buy', legs }));
  }
  events.push(tick(301, new Date(ts + 90_000).toISOString()));
  return events;
}

type Payload = Record<string, unknown>;

/** The frames' view: closed bars and the open bar per market × interval, oldest first. */
function expectedBars(events: EngineEvent[]): Map<string, Array<Payload & { closed: boolean }>> {
  let state = initialCandles();
  const closed = new Map<string, Payload[]>();
  const latestUpdate = new Map<string, Payload>();
  for (const e of events) {
    const out = projectCandles(state, e);
    state = out.state;
    for (const f of out.frames) {
      const key = `${f.market} ${f.interval}`;
      if (f.kind === 'candle.close') closed.set(key, [...(closed.get(key) ?? []), f.payload]);
      else latestUpdate.set(key, f.payload);
    }
  }
  const bars = new Map<string, Array<Payload & { closed: boolean }>>();
  for (const market of MARKETS) {
    for (const interval of CANDLE_INTERVALS) {
      const key = `${market} ${interval}`;
      const list = (closed.get(key) ?? []).map((p) => ({ ...p, closed: true }));
      const open = state.open.get(market)?.get(interval);
      if (open) {
        const update = latestUpdate.get(key)!;
        expect(update.openTs).toBe(open.openTs);
        list.push({ ...update, closed: false });
      }
      bars.set(key, list);
    }
  }
  return bars;
}

async function mirror(db: TestDatabase, events: EngineEvent[]): Promise<void> {
  for (const e of events) {
    await db.sql`INSERT INTO events (seq, kind, ts, market, party, payload) VALUES (${e.seq}, ${e.kind}, ${e.ts}, ${e.market ?? null}, NULL, ${db.sql.json(e.payload as never)})`;
    if (e.kind !== 'engine.order_filled') continue;
    const legs = e.payload.legs as FillLeg[];
    for (const [i, l] of legs.entries()) {
      await db.sql`
        INSERT INTO fills (seq, leg, fill_id, match_id, order_id, party, market, side, role, size, price, fee, realized_pnl, new_balance, position_id, created_at)
        VALUES (${e.seq}, ${i}, ${`${e.seq}-${i}`}, ${`m${e.seq}`}, ${l.orderId}, ${l.party}, ${e.market!}, ${l.side}, ${l.role},
                ${l.size}, ${l.price}, ${l.fee}, ${l.realizedPnl}, ${l.newBalance}, ${l.positionId}, ${e.ts})`;
    }
  }
}

let db: TestDatabase;
let gw: TestGateway;
let expected: Map<string, Array<Payload & { closed: boolean }>>;

beforeAll(async () => {
  const events = history();
  expected = expectedBars(events);
  db = await createTestDatabase();
  await mirror(db, events);
  gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await db?.drop();
});

async function get(query: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const res = await gw.app.inject(`/v1/candles?${query}`);
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

describe('GET /v1/candles', () => {
  it('every bar equals its live frame: closed bars their candle.close, the current bar the latest candle.update', async () => {
    for (const market of MARKETS) {
      for (const interval of CANDLE_INTERVALS) {
        const want = expected.get(`${market} ${interval}`)!;
        expect(want.length, `${market} ${interval}`).toBeGreaterThan(0);
        const res = await get(`market=${market}&interval=${interval}&limit=1000`);
        expect(res.status).toBe(200);
        expect(res.body.nextCursor).toBeNull();
        const got = res.body.items.map(({ market: m, interval: i, ...rest }: Payload) => {
          expect([m, i]).toEqual([market, interval]);
          return rest;
        });
        expect(got, `${market} ${interval}`).toEqual(want);
      }
    }
    // The data really exercises what matters: several closed 4h bars, a closed 1d bar, an open 1m bar or not.
    expect(expected.get('BTC-PERP 4h')!.length).toBeGreaterThan(2);
    expect(expected.get('BTC-PERP 1d')!.map((b) => b.closed)).toEqual([true, false]);
  });

  it('pages backwards with nextCursor as `to`, giving the same bars as one page', async () => {
    const want = expected.get('ETH-PERP 5m')!;
    const pages: Payload[] = [];
    let to: number | null = null;
    for (let n = 0; n < 100; n++) {
      const res = await get(`market=ETH-PERP&interval=5m&limit=7${to !== null ? `&to=${to}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(7);
      pages.unshift(...res.body.items.map(({ market: _m, interval: _i, ...rest }: Payload) => rest));
      to = res.body.nextCursor;
      if (to === null) break;
      expect(to).toBe(Date.parse(res.body.items[0].openTs));
    }
    expect(pages).toEqual(want);
  });

  it('keeps to the window [from, to) of bucket starts, the most recent `limit` first', async () => {
    const all = expected.get('BTC-PERP 15m')!;
    const from = Date.parse(all[3]!.openTs as string);
    const to = Date.parse(all[9]!.openTs as string);
    const strip = (items: Payload[]) => items.map(({ market: _m, interval: _i, ...rest }) => rest);
    const window = await get(`market=BTC-PERP&interval=15m&from=${from}&to=${to}`);
    expect([window.status, strip(window.body.items), window.body.nextCursor]).toEqual([200, all.slice(3, 9), null]);
    // A `from` inside a bucket excludes that bucket (its start is before `from`).
    const inside = await get(`market=BTC-PERP&interval=15m&from=${from + 1}&to=${to}`);
    expect(strip(inside.body.items)).toEqual(all.slice(4, 9));
    const newest = await get(`market=BTC-PERP&interval=15m&from=${from}&to=${to}&limit=2`);
    expect([strip(newest.body.items), newest.body.nextCursor]).toEqual([all.slice(7, 9), Date.parse(all[7]!.openTs as string)]);
    expect(newest.headers['cache-control']).toBe('public, max-age=1');
  });

  it('answers an unknown market with no bars, and bad input with a 400 naming it', async () => {
    expect((await get('market=DOGE-PERP&interval=1h')).body).toEqual({ items: [], nextCursor: null });
    for (const [query, word] of [
      ['interval=1h', 'market'],
      ['market=BTC-PERP', 'interval'],
      ['market=BTC-PERP&interval=2h', 'interval'],
      ['market=BTC-PERP&interval=1h&limit=0', 'limit'],
      ['market=BTC-PERP&interval=1h&from=-1', 'from'],
      ['market=BTC-PERP&interval=1h&to=1.5', 'to'],
      ['market=BTC-PERP&interval=1h&from=10&to=10', 'from'],
      ['market=BTC-PERP&interval=1h&cursor=5', 'cursor'],
    ] as const) {
      const res = await get(query);
      expect([query, res.status, res.body.code]).toEqual([query, 400, 'bad_request']);
      expect(res.body.error, query).toContain(word);
    }
  });
});
