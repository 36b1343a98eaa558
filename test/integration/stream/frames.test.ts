// Domain frames end to end: scripted engine SSE → gateway → real WebSocket client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A, B, fill, leg, simpleMatch, tick } from '../../unit/projections/fixtures.js';
import { connect, deliveredTo, startStack, type Stack } from './helpers.js';
import { waitFor } from '../../support/scripted-sse.js';

describe('stream frames from engine events', () => {
  let s: Stack;
  let seq = 0;
  const next = () => ++seq;
  beforeAll(async () => {
    s = await startStack({ WS_ORDERBOOK_POLL_MS: '50' });
    await s.engine.waitFor(() => s.engine.open === 1);
  });
  afterAll(async () => s.close());

  it('a flip gives two position.update frames in order and one coalesced trade', async () => {
    const c = await connect(s.gw.url, `party=${A}&kinds=position.update,trade`);
    const n = next();
    s.engine.push(
      fill(n, '2026-11-21T10:00:05.000Z', {
        price: '105',
        size: '3',
        takerSide: 'sell',
        legs: [
          leg({ party: A, role: 'taker', side: 'sell', size: '1', price: '105', positionId: 'pa1', positionSize: '0', entryPrice: '100', realizedPnl: '5' }),
          leg({ party: A, role: 'taker', side: 'sell', size: '2', price: '105', positionId: 'pa2', positionSize: '-2', entryPrice: '105', realizedPnl: '0' }),
          leg({ party: B, role: 'maker', side: 'buy', size: '3', price: '105', positionId: 'pb1', positionSize: '3', entryPrice: '105' }),
        ],
      }),
    );
    await c.waitFor((m) => m.some((x) => x.kind === 'trade'));
    const frames = c.frames();
    expect(frames.map((f) => [f.kind, f.payload.positionId ?? null])).toEqual([
      ['position.update', 'pa1'],
      ['position.update', 'pa2'],
      ['trade', null],
    ]);
    expect(frames[0]!.payload).toEqual({ positionId: 'pa1', size: '0.0000000000', entryPrice: '100.0000000000', realizedPnl: '5.0000000000', asOfSeq: n });
    expect(frames[1]!.payload).toEqual({ positionId: 'pa2', size: '-2.0000000000', entryPrice: '105.0000000000', realizedPnl: '0.0000000000', asOfSeq: n });
    expect(frames[2]).toEqual({
      kind: 'trade',
      seq: n,
      ts: '2026-11-21T10:00:05.000Z',
      market: 'BTC-PERP',
      payload: { matchId: `m${n}`, side: 'sell', size: '3.0000000000', price: '105.0000000000', takerOrderId: 'taker-order', makerOrderId: 'maker-order' },
    });
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('sends exactly one candle.close per bucket, timed by engine ts (ticks included)', async () => {
    const c = await connect(s.gw.url, 'kinds=candle.close,candle.update&intervals=1m&snapshot=false');
    const first = next();
    s.engine.push(
      simpleMatch(first, '2026-11-21T10:05:10.000Z', '200', '1'),
      simpleMatch(next(), '2026-11-21T10:05:50.000Z', '210', '0.5'),
      tick(next(), '2026-11-21T10:06:00.000Z'),
      tick(next(), '2026-11-21T10:06:01.000Z'),
      tick(next(), '2026-11-21T10:06:30.000Z'),
    );
    await c.waitFor((m) => m.some((x) => x.kind === 'candle.close'));
    await deliveredTo(s, seq, c);
    const closes = c.frames().filter((f) => f.kind === 'candle.close');
    expect(closes).toHaveLength(2); // the 10:00 bucket of the previous test (1m) and the 10:05 one
    const bar = closes.find((f) => f.payload.openTs === '2026-11-21T10:05:00.000Z')!;
    expect(bar).toMatchObject({ seq: first + 2, interval: '1m', market: 'BTC-PERP' });
    expect(bar.payload).toEqual({
      openTs: '2026-11-21T10:05:00.000Z',
      closeTs: '2026-11-21T10:06:00.000Z',
      open: '200.0000000000',
      high: '210.0000000000',
      low: '200.0000000000',
      close: '210.0000000000',
      volume: '1.5000000000',
      trades: 2,
    });
    expect(c.frames().filter((f) => f.kind === 'candle.update').map((f) => f.payload.trades)).toEqual([1, 2]);
    expect(c.frames().every((f) => f.interval === '1m')).toBe(true);
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('an unchanged order book sends nothing; a change sends one full snapshot', async () => {
    // Connected first: a poll between setting the book and the handshake would publish the
    // snapshot before this client is there to receive it (a snapshot is sent only on change).
    const c = await connect(s.gw.url, 'kinds=orderbook.snapshot');
    s.engine.books.set('BTC-PERP', { seq: 40, bids: [['99.5', '2']], asks: [['100.5', '1']] });
    await c.waitFor((m) => m.some((x) => x.kind === 'orderbook.snapshot' && x.seq === 40));
    const polled = s.engine.bookRequests.length;
    // Several polls of the same book (polls follow one another: the earlier ones were judged).
    await waitFor(() => s.engine.bookRequests.length > polled + 3, 5_000, 'several polls of the same book');
    expect(c.frames().filter((f) => f.seq === 40)).toHaveLength(1);
    s.engine.books.set('BTC-PERP', { seq: 41, bids: [['99.5', '2'], ['99', '4']], asks: [['100.5', '1']] });
    await c.waitFor((m) => m.some((x) => x.seq === 41));
    const after41 = s.engine.bookRequests.length;
    await waitFor(() => s.engine.bookRequests.length > after41 + 2, 5_000, 'more polls of the same book');
    const snaps = c.frames().filter((f) => f.kind === 'orderbook.snapshot');
    expect(snaps.at(-1)).toMatchObject({
      seq: 41,
      market: 'BTC-PERP',
      payload: {
        depth: 20,
        bids: [
          ['99.5000000000', '2.0000000000'],
          ['99.0000000000', '4.0000000000'],
        ],
        asks: [['100.5000000000', '1.0000000000']],
      },
    });
    expect(snaps.filter((f) => f.seq === 41)).toHaveLength(1);
    expect(s.engine.bookRequests.every((r) => r === 'BTC-PERP 20')).toBe(true);
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });

  it('learns sessions from session.authorized and forwards passthrough events unchanged', async () => {
    const c = await connect(s.gw.url, `party=${A}&kinds=session.authorized,engine.tick_start`);
    const n = next();
    const ev = { seq: n, kind: 'session.authorized', ts: '2026-11-21T10:07:00.000Z', party: A, payload: { sessionId: 'sess-1', sessionPublicKey: 'c'.repeat(64), expiresAt: '2099-01-01T00:00:00.000Z' } };
    s.engine.push(ev);
    await c.waitFor((m) => m.some((x) => x.kind === 'session.authorized'));
    expect(c.frames()).toEqual([ev]);
    const known = await s.gw.deps.sessions.get('sess-1');
    expect(known?.party).toBe(A);
    c.ws.close();
  });
});
