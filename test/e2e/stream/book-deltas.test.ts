// Order book deltas against the reference engine under the market simulator: a delta connection's
// book, rebuilt from its snapshot and deltas (chained by prevBookSeq, checked by the CRC-32 of
// every frame), ends equal to the engine's book; a grouped view stays consistent too; the spec's
// polled snapshots still reach connections that did not ask for deltas; a divergence of the
// gateway's book is repaired from the engine's poll, counted and sent as a fresh snapshot.
import { beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { startSimulator } from '../../../sandbox/simulator/simulator.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';
import { LiveRuntime } from '../../../src/live.js';
import { parseDecimal } from '../../../src/decimal.js';
import { connect, type TestClient } from '../../integration/stream/helpers.js';
import { ClientBook, type Level } from '../../support/client-book.js';

type L = Level;

describe('order book deltas (reference engine + simulator)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;

  const stacks = fileScope();
  beforeAll(async () => {
    engine = await testEngine(stacks);
    gw = await testLiveGateway(stacks, engine, { WS_ORDERBOOK_POLL_MS: '100' });
  });

  const engineBook = async (market: string) =>
    (await (await request(`${engine.url}/v1/orderbook?depth=100&market=${market}`)).body.json()) as { seq: number; bids: Array<[string, string]>; asks: Array<[string, string]> };

  it('a delta client ends with the engine book; grouped views and polled snapshots keep working', { timeout: 60_000 }, async () => {
    const full: TestClient = await connect(gw.url, 'kinds=orderbook.delta&markets=BTC-PERP&depth=1000');
    const grouped: TestClient = await connect(gw.url, 'kinds=orderbook.delta&markets=BTC-PERP&depth=5&group=sig:3');
    const spec: TestClient = await connect(gw.url, 'kinds=orderbook.snapshot&markets=BTC-PERP');
    const sim = await startSimulator({ engineUrl: engine.url, adminToken: engine.adminToken, rate: 200, bots: 6, seed: 21 });
    await full.waitFor((m) => m.filter((x) => x.kind === 'orderbook.delta').length >= 300, 30_000);
    await sim.stop();

    const target = await engineBook('BTC-PERP');
    const fullBook = new ClientBook();
    await waitFor(
      () => {
        fullBook.errors = [];
        const b = new ClientBook();
        for (const m of full.messages) b.apply(m);
        Object.assign(fullBook, b);
        return b.bookSeq === target.seq;
      },
      10_000,
      'the delta client reaches the engine book seq',
    );
    expect(fullBook.errors).toEqual([]);
    expect(fullBook.snapshots).toBe(1);
    expect(fullBook.deltas).toBeGreaterThanOrEqual(300);
    expect(fullBook.sorted('buy').slice(0, 100).map((l) => [l[0], l[1]])).toEqual(target.bids);
    expect(fullBook.sorted('sell').slice(0, 100).map((l) => [l[0], l[1]])).toEqual(target.asks);
    // Every level carries its order count.
    expect(fullBook.sorted('buy').every((l) => l[2] >= 1)).toBe(true);

    const groupedBook = new ClientBook();
    for (const m of grouped.messages) groupedBook.apply(m);
    expect(groupedBook.errors).toEqual([]);
    expect(groupedBook.bids.size).toBeLessThanOrEqual(5);
    for (const [price] of groupedBook.bids) expect(parseDecimal(price) % 1_000_000_000_000n).toBe(0n); // 65 000 at 3 figures: multiples of 100

    // Connections that did not ask for deltas get the spec's polled snapshots, unchanged.
    expect(spec.frames().some((f) => f.kind === 'orderbook.snapshot' && f.payload.depth === 20 && f.payload.checksum === undefined)).toBe(true);
    expect(spec.frames().every((f) => f.kind === 'orderbook.snapshot')).toBe(true);
    for (const c of [full, grouped, spec]) expect(c.schemaErrors).toEqual([]);
    for (const c of [full, grouped, spec]) c.ws.close();
  });

  it('a divergence from the engine poll is repaired, counted and sent as a fresh snapshot', { timeout: 30_000 }, async () => {
    const live = gw.deps.live as LiveRuntime;
    const client = await connect(gw.url, 'kinds=orderbook.delta&markets=ETH-PERP&depth=50');
    await client.waitFor((m) => m.some((x) => x.kind === 'orderbook.snapshot'));
    // The engine's book at rest first (a take-profit or stop-loss of the first test's simulator may
    // still fire): the repaired snapshot is compared with this read.
    let target = await engineBook('ETH-PERP');
    for (let quiet = 0; quiet < 3; ) {
      // Deliberate: at rest means three reads 300 ms apart at the same seq (nothing happened between).
      await new Promise((r) => setTimeout(r, 300));
      const again = await engineBook('ETH-PERP');
      quiet = again.seq === target.seq ? quiet + 1 : 0;
      target = again;
    }
    await waitFor(() => live.queries.books!.keeper.book('ETH-PERP')?.seq === target.seq, 5_000, 'the gateway book at the engine seq');
    const book = live.queries.books!.keeper.book('ETH-PERP')!;
    expect(book.seq).toBe(target.seq);
    // Corrupt the gateway's book at the same seq (as a lost event would): a phantom best bid.
    const phantom = target.bids.length > 0 ? parseDecimal(target.bids[0]![0]) + 1n : parseDecimal('1');
    const levelsOf = (side: Array<[string, string]>) => side.map(([p, s]) => [parseDecimal(p), parseDecimal(s)] as [bigint, bigint]);
    // Within the levels the engine poll reads (WS_ORDERBOOK_DEPTH, 20): the divergence check compares those.
    book.replaceLevels([[phantom, parseDecimal('7')], ...levelsOf(target.bids)], levelsOf(target.asks), target.seq, 100);
    const metric = async () => {
      const text = await (await request(`${gw.url}/metrics`)).body.text();
      const line = text.split('\n').find((l) => l.startsWith('bff_book_divergences_total{market="ETH-PERP"}'));
      return line ? Number(line.split(' ')[1]) : 0;
    };
    // The repair replaces the levels the poll read (WS_ORDERBOOK_DEPTH) and re-seeds the book order by
    // order: a fresh snapshot follows each step, the last one the engine's book to the view's depth.
    const levels = (l: L[]) => l.map((x) => [x[0], x[1]]);
    const matches = (x: { kind: string; payload: Record<string, unknown> }) =>
      x.kind === 'orderbook.snapshot' &&
      JSON.stringify(levels(x.payload.bids as L[])) === JSON.stringify(target.bids.slice(0, 50)) &&
      JSON.stringify(levels(x.payload.asks as L[])) === JSON.stringify(target.asks.slice(0, 50));
    await client.waitFor((m) => m.filter((x) => x.kind === 'orderbook.snapshot').length >= 2 && matches(m.filter((x) => x.kind === 'orderbook.snapshot').at(-1)!), 10_000);
    expect(await metric()).toBe(1);
    const repaired = client.messages.filter((x) => x.kind === 'orderbook.snapshot').at(-1)!;
    expect(repaired.snapshot).toBeUndefined(); // a live snapshot, not state on subscribe
    expect(repaired.payload.bids.map((l: L) => [l[0], l[1]])).toEqual(target.bids.slice(0, 50));
    expect(repaired.payload.asks.map((l: L) => [l[0], l[1]])).toEqual(target.asks.slice(0, 50));
    expect(client.schemaErrors).toEqual([]);
    client.ws.close();
  });
});
