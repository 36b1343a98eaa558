// State on subscribe: before live frames a new connection receives the latest order book of each
// admitted market, the open candle of each admitted market × interval, and for its parties their
// open positions and balance — frames of their ordinary kinds marked "snapshot": true. Filters
// apply to them; snapshot=false opts out; a party's state older than this process comes from the
// database mirror. Plus heartbeat=N and the strict parsing of the new parameters.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { eventually } from '../../support/eventually.js';
import { startScriptedEngine, waitFor } from '../../support/scripted-sse.js';
import { A, B, fill, leg, simpleMatch } from '../../unit/projections/fixtures.js';
import { connect, insertEvents, lockTable, refused, startStack, ticks, ts, waitingReads, type Msg, type Stack } from './helpers.js';

const tag = (m: Msg) => `${m.kind}${m.market ? `@${m.market}` : ''}${m.interval ? `/${m.interval}` : ''}:${m.seq}${m.snapshot ? ':snap' : ''}`;

describe('snapshot frames (memory state)', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack();
    s.engine.markets = [
      { symbol: 'BTC-PERP', status: 'active' },
      { symbol: 'ETH-PERP', status: 'active' },
    ];
    s.engine.books.set('BTC-PERP', { seq: 2, bids: [['99', '1']], asks: [['101', '2']] });
    s.engine.books.set('ETH-PERP', { seq: 3, bids: [['6', '1']], asks: [['8', '1']] });
    await s.engine.waitFor(() => s.engine.open === 1);
    await s.live.poller!.pollOnce();
    s.engine.push(simpleMatch(1, ts(1), '100', '2'), simpleMatch(2, ts(2), '7', '1', 'ETH-PERP'));
    await waitFor(() => s.live.status().maxSeq === 2, 5_000, 'events');
  });
  afterAll(async () => s.close());

  it('a spec-only client gets books, open candles, then live; filters apply to snapshots too', async () => {
    const all = await connect(s.gw.url);
    const narrow = await connect(s.gw.url, 'markets=ETH-PERP&kinds=orderbook.snapshot,candle.update&intervals=1h');
    const optOut = await connect(s.gw.url, 'snapshot=false');
    s.engine.push(simpleMatch(3, ts(3), '101', '1'));
    for (const c of [all, optOut]) await c.waitFor((m) => m.some((x) => x.seq === 3 && !x.snapshot && x.kind !== 'orderbook.snapshot'));
    await narrow.waitFor((m) => m.length >= 2);
    const candles = (market: string, seq: number) => ['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w'].map((i) => `candle.update@${market}/${i}:${seq}:snap`);
    const allTags = all.messages.map(tag);
    expect(allTags.slice(0, 20)).toEqual([
      'orderbook.snapshot@BTC-PERP:2:snap',
      'orderbook.snapshot@ETH-PERP:3:snap',
      ...candles('BTC-PERP', 1),
      ...candles('ETH-PERP', 2),
      // The last trades of each market (a trade tape full at once).
      'trade@BTC-PERP:1:snap',
      'trade@ETH-PERP:2:snap',
    ]);
    expect(allTags[20]).toBe('engine.order_filled@BTC-PERP:3'); // then live
    expect(all.messages[2]!.payload).toMatchObject({ open: '100.0000000000', close: '100.0000000000', volume: '2.0000000000', trades: 1 });
    expect(narrow.messages.map(tag)).toEqual(['orderbook.snapshot@ETH-PERP:3:snap', 'candle.update@ETH-PERP/1h:2:snap']);
    expect(optOut.messages.some((m) => m.snapshot)).toBe(false);
    // Not a control message: no stream.* kind for a client that did not opt in.
    expect(all.messages.some((m) => m.kind.startsWith('stream.'))).toBe(false);
    for (const c of [all, narrow, optOut]) {
      expect(c.schemaErrors).toEqual([]);
      c.ws.close();
    }
  });

  it('a party connection gets its open positions and balance (a closed epoch is not sent)', async () => {
    // A flips: pa1 closes (size 0), pa2 opens short.
    s.engine.push(
      fill(4, ts(4), {
        price: '105',
        size: '3',
        takerSide: 'sell',
        legs: [
          leg({ party: A, role: 'taker', side: 'sell', size: '3', price: '105', positionId: 'pa1', positionSize: '0', realizedPnl: '10', newBalance: '1010' }),
          leg({ party: A, role: 'taker', side: 'sell', size: '1', price: '105', positionId: 'pa2', positionSize: '-1', entryPrice: '105', newBalance: '1010' }),
          leg({ party: B, role: 'maker', side: 'buy', size: '3', price: '105', positionId: 'pb1', positionSize: '0', newBalance: '990' }),
        ],
      }),
    );
    await waitFor(() => s.live.status().maxSeq === 4, 5_000, 'flip');
    const c = await connect(s.gw.url, `party=${A}&kinds=position.update,balance.update`);
    await c.waitFor((m) => m.length >= 2);
    expect(c.messages.map(tag)).toEqual(['position.update@BTC-PERP:4:snap', 'balance.update:4:snap']);
    expect(c.messages[0]!.payload).toEqual({ positionId: 'pa2', size: '-1.0000000000', entryPrice: '105.0000000000', realizedPnl: '0.0000000000', asOfSeq: 4 });
    expect(c.messages[0]!.userParty).toBe(A);
    expect(c.messages[1]!.payload).toEqual({ balance: '1010.0000000000', asOfSeq: 4 });
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('heartbeat=N sends stream.heartbeat with the head, without control', async () => {
    const c = await connect(s.gw.url, 'heartbeat=1&kinds=trade&snapshot=false');
    const started = Date.now();
    await c.waitFor((m) => m.some((x) => x.kind === 'stream.heartbeat'), 5_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(c.messages[0]).toMatchObject({ kind: 'stream.heartbeat', seq: 4, payload: { headSeq: 4 } });
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('refuses bad epoch, heartbeat and snapshot values with 400 bad_request', async () => {
    for (const q of ['heartbeat=0', 'heartbeat=301', 'heartbeat=1.5', 'heartbeat=abc', 'heartbeat=1&heartbeat=2', 'snapshot=yes', 'snapshot=', 'epoch=a%20b', `epoch=${'e'.repeat(65)}`]) {
      const r = await refused(s.gw.url, q);
      expect(r.status, q).toBe(400);
      expect(r.body.code, q).toBe('bad_request');
    }
  });
});

describe('snapshot frames: a party state older than this process comes from the database', () => {
  let s: Stack;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    // Before this process: A opened pa-old (seq 3) and pa-gone (closed in memory later), balance 800 after seq 3.
    await insertEvents(db, ticks(1, 5));
    await db.sql`INSERT INTO positions (position_id, party, market, size, entry_price, realized_pnl, status, opened_seq, updated_seq, opened_at, updated_at)
      VALUES ('pa-old', ${A}, 'BTC-PERP', 2, 90, 0, 'open', 3, 3, ${ts(3)}, ${ts(3)}),
             ('pa-gone', ${A}, 'ETH-PERP', 1, 7, 0, 'open', 2, 2, ${ts(2)}, ${ts(2)}),
             ('pa-closed', ${A}, 'BTC-PERP', 0, 80, 5, 'closed', 1, 1, ${ts(1)}, ${ts(1)})`;
    await db.sql`INSERT INTO fills (seq, leg, fill_id, match_id, order_id, party, market, side, role, size, price, fee, realized_pnl, new_balance, position_id, created_at)
      VALUES (3, 0, '3-0', 'm3', 'o3', ${A}, 'BTC-PERP', 'buy', 'taker', 2, 90, 0, 0, 800, 'pa-old', ${ts(3)})`;
    const engine = await startScriptedEngine();
    engine.push(...ticks(1, 5));
    s = await startStack({ DATABASE_URL: db.url }, { engine });
    await s.engine.waitFor(() => s.engine.open === 1 && s.live.status().connected);
  });
  afterAll(async () => {
    await s.close();
    await db.drop();
  });

  it('open positions and the balance come from the mirror, live frames are held until they are sent', async () => {
    const c1 = await connect(s.gw.url, `party=${A}&kinds=position.update,balance.update,engine.tick_start`);
    await c1.waitFor((m) => m.length >= 3);
    expect(c1.messages.map(tag).sort()).toEqual(['balance.update:3:snap', 'position.update@BTC-PERP:3:snap', 'position.update@ETH-PERP:2:snap']);
    expect(c1.messages.find((m) => m.payload.positionId === 'pa-old')!.payload).toEqual({
      positionId: 'pa-old',
      size: '2.0000000000',
      entryPrice: '90.0000000000',
      realizedPnl: '0.0000000000',
      asOfSeq: 3,
    });
    expect(c1.messages.find((m) => m.kind === 'balance.update')!.payload).toEqual({ balance: '800.0000000000', asOfSeq: 3 });
    c1.ws.close();

    // pa-gone closes live (the mirror has not caught up): it is not sent again; the new balance is.
    s.engine.push(
      fill(6, ts(6), {
        price: '7',
        size: '1',
        takerSide: 'sell',
        market: 'ETH-PERP',
        legs: [
          leg({ party: A, role: 'taker', side: 'sell', size: '1', price: '7', positionId: 'pa-gone', positionSize: '0', newBalance: '805' }),
          leg({ party: B, role: 'maker', side: 'buy', size: '1', price: '7', positionId: 'pb9', positionSize: '1', newBalance: '1000' }),
        ],
      }),
    );
    await waitFor(() => s.live.status().maxSeq === 6, 5_000, 'close');
    const c2 = await connect(s.gw.url, `party=${A}&kinds=position.update,balance.update,engine.tick_start`);
    s.engine.push(...ticks(7, 7)); // live, possibly while the database part is read: held, then after it
    await c2.waitFor((m) => m.some((x) => x.seq === 7));
    expect(c2.messages.map(tag)).toEqual(['position.update@BTC-PERP:3:snap', 'balance.update:6:snap', 'engine.tick_start:7']);
    expect(c2.messages[1]!.payload).toEqual({ balance: '805.0000000000', asOfSeq: 6 });
    expect(c2.schemaErrors).toEqual([]);
    c2.ws.close();
  });

  it('live frames wait while the database part is read (the table locked), then follow it, in order', async () => {
    if (db.kind === 'pglite') return; // one embedded connection: a lock would block the gateway's read and this test alike
    const lock = await lockTable(db, 'positions');
    try {
      const c = await connect(s.gw.url, `party=${A}&kinds=position.update,balance.update,engine.tick_start`);
      s.engine.push(...ticks(8, 9));
      await waitFor(() => s.live.status().maxSeq === 9, 5_000, 'live events');
      // The connection's snapshot read is held by the lock: frames 8 and 9 were published meanwhile.
      await eventually(async () => (await waitingReads(db, 'FROM positions')) > 0, { timeoutMs: 5_000, what: 'the snapshot read waiting for the lock' });
      expect(c.messages).toEqual([]); // held: nothing before the snapshot
      await lock.release();
      await c.waitFor((m) => m.some((x) => x.seq === 9));
      expect(c.messages.map(tag)).toEqual([
        'position.update@BTC-PERP:3:snap',
        'balance.update:6:snap',
        'engine.tick_start:8',
        'engine.tick_start:9',
      ]);
      c.ws.close();
    } finally {
      await lock.release();
    }
  });

  it('a since= resume gets the replay, then the snapshot (as of the head), then live', async () => {
    const c = await connect(s.gw.url, `party=${A}&kinds=position.update,balance.update,engine.tick_start&since=8`);
    s.engine.push(...ticks(10, 10));
    await c.waitFor((m) => m.some((x) => x.seq === 10));
    expect(c.messages.map(tag)).toEqual([
      'stream.subscribed:9',
      'engine.tick_start:9',
      'position.update@BTC-PERP:3:snap',
      'balance.update:6:snap',
      'engine.tick_start:10',
    ]);
    expect(s.live.status().gap).toBeUndefined();
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });
});
