// The trade tape after a restart (docs/stream.md "State on subscribe"), against the reference
// engine with the indexer writing PostgreSQL: a first gateway publishes the trade frames of
// matches in two markets (more than LAST_TRADES in one, a flip, a taker filling two makers); a
// gateway started afterwards, with no match since, sends a connection subscribing to `trade` the
// last LAST_TRADES trades of each market: exactly the frames the first one published live, as
// snapshot frames, oldest first. A match after the restart joins the tape after them.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testGateway } from '../../support/stacks.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { faucet, makeParty, SigningClient } from '../../sandbox/engine/helpers.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';
import { eventually } from '../../support/eventually.js';
import { connect, type Msg } from '../../integration/stream/helpers.js';
import type { LiveRuntime } from '../../../src/live.js';
import { LAST_TRADES } from '../../../src/stream/recent-trades.js';

describe('trade tape seeded from the database at start', () => {
  let db: TestDatabase;
  let engine: RunningEngine;
  let indexer: RunningIndexer;

  async function gateway(): Promise<TestGateway> {
    const gw = await testGateway(stacks, { DATABASE_URL: db.url, ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, RATE_LIMIT_MAX: '1000000' }, { listen: true });
    const live = gw.deps.live as LiveRuntime;
    await live.start();
    await waitFor(() => live.status().connected, 5_000, 'bridge');
    await waitFor(() => live.knownMarkets() !== null, 5_000, 'market list');
    return gw;
  }

  const stacks = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    stacks.onTestFinished(() => db.drop());
    engine = await testEngine(stacks);
    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, migrate: false });
    stacks.onTestFinished(() => indexer.close());
  });

  it('a restarted gateway sends the frames the live path published for the same matches', { timeout: 120_000 }, async () => {
    const first = await gateway();
    const maker = new SigningClient(engine.url, makeParty('maker'));
    const taker = new SigningClient(engine.url, makeParty('taker'));
    for (const c of [maker, taker]) {
      expect((await c.authorize()).body.ok).toBe(true);
      expect((await faucet(engine.url, engine.adminToken, c.id, '1000000')).body.ok).toBe(true);
    }
    const published = await connect(first.url, 'kinds=trade&snapshot=false');
    // ETH-PERP: more matches than the tape keeps, alternating sides (the taker flips through zero).
    const ETH_MATCHES = LAST_TRADES + 4;
    for (let i = 0; i < ETH_MATCHES; i++) {
      const side = i % 2 === 0 ? 'buy' : 'sell';
      const size = i % 2 === 0 ? '0.02' : '0.03';
      const price = String(3000 + i);
      expect((await maker.placeOrder({ market: 'ETH-PERP', side: side === 'buy' ? 'sell' : 'buy', type: 'limit', size, price })).body.ok).toBe(true);
      expect((await taker.placeOrder({ market: 'ETH-PERP', side, type: 'limit', size, price })).body.status).toBe('filled');
    }
    // SOL-PERP: one taker order against two makers (two matches), then one more.
    expect((await maker.placeOrder({ market: 'SOL-PERP', side: 'sell', type: 'limit', size: '1', price: '150' })).body.ok).toBe(true);
    expect((await maker.placeOrder({ market: 'SOL-PERP', side: 'sell', type: 'limit', size: '2', price: '151' })).body.ok).toBe(true);
    expect((await taker.placeOrder({ market: 'SOL-PERP', side: 'buy', type: 'limit', size: '3', price: '151' })).body.status).toBe('filled');
    expect((await maker.placeOrder({ market: 'SOL-PERP', side: 'buy', type: 'limit', size: '0.5', price: '149' })).body.ok).toBe(true);
    expect((await taker.placeOrder({ market: 'SOL-PERP', side: 'sell', type: 'market', size: '0.5' })).body.status).toBe('filled');
    await published.waitFor((ms) => ms.filter((m) => m.kind === 'trade').length === ETH_MATCHES + 3, 20_000);
    const live = published.frames().filter((m) => m.kind === 'trade');
    const lastOf = (frames: Msg[], market: string) => frames.filter((f) => f.market === market).slice(-LAST_TRADES);
    const expected = [...lastOf(live, 'ETH-PERP'), ...lastOf(live, 'SOL-PERP')];
    expect(expected).toHaveLength(LAST_TRADES + 3);

    // A gateway started afterwards, the mirror complete, no match since.
    await indexer.waitFor(engine.engine.log.maxSeq, 10_000);
    const second = await gateway();
    // The seed is read beside the live path (start() does not wait for it): connect until it landed
    // (a connection's snapshot comes at its opening: up to half a second for all of it).
    const snapshot = await eventually(
      async () => {
        const c = await connect(second.url, 'kinds=trade');
        await c.waitFor((ms) => ms.filter((m) => !m.kind.startsWith('stream.')).length >= expected.length, 500).catch(() => undefined);
        c.ws.close();
        const frames = c.frames();
        return frames.length >= expected.length && frames;
      },
      { timeoutMs: 10_000, what: 'the seeded tape in a new connection\'s snapshot' },
    );
    const bare = (f: Msg) => ({ kind: f.kind, seq: f.seq, ts: f.ts, market: f.market, payload: f.payload });
    const byMarket = (frames: Msg[]) => [...lastOf(frames, 'ETH-PERP'), ...lastOf(frames, 'SOL-PERP')];
    expect(snapshot.every((f) => f.snapshot === true)).toBe(true);
    expect(byMarket(snapshot).map(bare)).toEqual(expected.map(bare));
    expect(snapshot).toHaveLength(expected.length);

    // A match after the restart: live, and then the newest of the tape, the oldest one gone.
    expect((await maker.placeOrder({ market: 'ETH-PERP', side: 'sell', type: 'limit', size: '0.01', price: '2999' })).body.ok).toBe(true);
    expect((await taker.placeOrder({ market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.01', price: '2999' })).body.status).toBe('filled');
    await published.waitFor((ms) => ms.filter((m) => m.kind === 'trade').length === ETH_MATCHES + 4, 10_000);
    const newest = published.frames().filter((m) => m.kind === 'trade').at(-1)!;
    await waitFor(() => (second.deps.live as LiveRuntime).status().maxSeq === engine.engine.log.maxSeq, 5_000, 'second gateway at head');
    const after = await connect(second.url, 'kinds=trade&markets=ETH-PERP');
    await after.waitFor((ms) => ms.filter((m) => m.kind === 'trade').length === LAST_TRADES);
    // Deliberate: no trade beyond the tape within 100 ms.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const tape = after.frames().filter((m) => m.kind === 'trade');
    expect(tape.map(bare)).toEqual([...lastOf(live, 'ETH-PERP').slice(1), newest].map(bare));
    expect([...published.schemaErrors, ...after.schemaErrors]).toEqual([]);
    after.ws.close();
    published.ws.close();
  });
});
