// The live stream against the reference engine: signed orders placed on the engine, frames seen
// by a proven WebSocket client of the gateway, every frame checked against the AsyncAPI schemas.
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { faucet, makeParty, signHex, SigningClient } from '../../sandbox/engine/helpers.js';
import type { TestGateway } from '../../support/gateway.js';
import { fileScope, testEngine, testGateway } from '../../support/stacks.js';
import { waitFor } from '../../support/scripted-sse.js';
import { LiveRuntime } from '../../../src/live.js';
import { connect, sleep, type TestClient } from '../../integration/stream/helpers.js';

describe('stream against the reference engine', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let alice: SigningClient;
  let bob: SigningClient;
  // Engine time = real time (signatures are checked against it) plus an offset the test moves.
  let offset = 0;

  const proof = (c: SigningClient) => {
    const ts = Date.now();
    return `user=${encodeURIComponent(c.id)}&sessionId=${encodeURIComponent(c.sessionId)}&sig=${ts}.${signHex(c.session.privateKey, `GET\n/v1/stream\n${ts}\n`)}`;
  };

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file, { now: () => Date.now() + offset });
    gw = await testGateway(
      file,
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, WS_ORDERBOOK_POLL_MS: '100' },
      { listen: true },
    );
    await (gw.deps.live as LiveRuntime).start();
    await waitFor(() => (gw.deps.live as LiveRuntime).status().connected, 5_000, 'bridge');
    alice = new SigningClient(engine.url, makeParty('alice'));
    bob = new SigningClient(engine.url, makeParty('bob'));
    for (const c of [alice, bob]) {
      expect((await c.authorize()).body).toMatchObject({ ok: true });
      expect((await faucet(engine.url, engine.adminToken, c.id, '100000')).body).toMatchObject({ ok: true });
    }
  });

  it('sessions learnt from the SSE stream prove a party; fills give positions (flip in order), trades, candles', { timeout: 60_000 }, async () => {
    // The gateway learnt both sessions from session.authorized events (no database here).
    await waitFor(() => gw.deps.sessions.size >= 2, 5_000, 'sessions learnt');
    // Keep every match inside one 1m bucket: start in the first 45 s of a minute.
    if (Date.now() % 60_000 > 45_000) await sleep(60_000 - (Date.now() % 60_000) + 50);
    // Live frames only (the state on subscribe is tested in test/integration/stream/snapshot.test.ts).
    const mine: TestClient = await connect(gw.url, `party=${alice.id}&kinds=position.update,balance.update&snapshot=false&${proof(alice)}`);
    const pub: TestClient = await connect(gw.url, 'kinds=trade,candle.update,candle.close,orderbook.snapshot&markets=BTC-PERP&intervals=1m&snapshot=false');

    expect((await bob.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: '60000' })).body).toMatchObject({ ok: true });
    await pub.waitFor((m) => m.some((x) => x.kind === 'orderbook.snapshot' && x.payload.asks.length === 1));
    expect((await alice.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '60000' })).body).toMatchObject({ ok: true, status: 'filled' });
    // Alice flips: sells 0.03 into Bob's bid — closes her long 0.01 and opens a short 0.02.
    expect((await bob.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.03', price: '61000' })).body).toMatchObject({ ok: true });
    expect((await alice.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'market', size: '0.03' })).body).toMatchObject({ ok: true, status: 'filled' });

    await mine.waitFor((m) => m.filter((x) => x.kind === 'position.update').length >= 3);
    const positions = mine.frames().filter((f) => f.kind === 'position.update');
    expect(positions.map((f) => [f.payload.size, f.payload.realizedPnl])).toEqual([
      ['0.0100000000', '0.0000000000'],
      ['0.0000000000', '10.0000000000'], // closed epoch: +1000 × 0.01
      ['-0.0200000000', '0.0000000000'], // fresh epoch, PnL restarts
    ]);
    expect(positions[1]!.payload.positionId).toBe(positions[0]!.payload.positionId);
    expect(positions[2]!.payload.positionId).not.toBe(positions[1]!.payload.positionId);
    expect(positions[1]!.seq).toBe(positions[2]!.seq);
    expect(mine.frames().every((f) => f.userParty === alice.id)).toBe(true);
    expect(mine.frames().filter((f) => f.kind === 'balance.update')).toHaveLength(3);

    await pub.waitFor((m) => m.filter((x) => x.kind === 'trade').length >= 2);
    expect(pub.frames().filter((f) => f.kind === 'trade').map((f) => f.payload)).toEqual([
      { matchId: expect.any(String), side: 'buy', size: '0.0100000000', price: '60000.0000000000', takerOrderId: expect.any(String), makerOrderId: expect.any(String) },
      { matchId: expect.any(String), side: 'sell', size: '0.0300000000', price: '61000.0000000000', takerOrderId: expect.any(String), makerOrderId: expect.any(String) },
    ]);

    // Engine time crosses the minute: the next tick closes the 1m bar exactly once.
    const bucketStart = Math.floor(Date.parse(pub.frames().find((f) => f.kind === 'trade')!.ts) / 60_000) * 60_000;
    offset = bucketStart + 60_500 - Date.now();
    engine.engine.tick();
    engine.engine.tick();
    await pub.waitFor((m) => m.some((x) => x.kind === 'candle.close'));
    // Deliberate: no second candle.close within 200 ms (the bar closes exactly once).
    await sleep(200);
    const closes = pub.frames().filter((f) => f.kind === 'candle.close');
    expect(closes).toHaveLength(1);
    expect(closes[0]).toMatchObject({
      market: 'BTC-PERP',
      interval: '1m',
      payload: {
        openTs: new Date(bucketStart).toISOString(),
        closeTs: new Date(bucketStart + 60_000).toISOString(),
        open: '60000.0000000000',
        high: '61000.0000000000',
        low: '60000.0000000000',
        close: '61000.0000000000',
        volume: '0.0400000000',
        trades: 2,
      },
    });
    for (const c of [mine, pub]) expect(c.schemaErrors).toEqual([]);
    mine.ws.close();
    pub.ws.close();
  });
});
