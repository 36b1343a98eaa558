// The live open interest (docs/stream.md "Open interest") against the reference engine, with the
// indexer writing PostgreSQL: matches among four parties in two markets (flips, reductions, moves
// of size between two longs), some before the gateway starts (its seed) and the rest while a
// client listens. After quiescence the last frame of every market equals GET /v1/markets'
// `openInterest`, which equals the sum of the open long sizes (and of the open short sizes)
// recomputed from GET /v1/users/:party/positions; a gateway started afterwards sends the same
// figures on subscribe, from its seed alone. (Auth off: the positions of four parties are read
// without their sessions; the frame itself is public.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { faucet, makeParty, SigningClient } from '../../sandbox/engine/helpers.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, type Msg, type TestClient } from '../../integration/stream/helpers.js';
import type { LiveRuntime } from '../../../src/live.js';
import { formatDecimal, parseDecimal } from '../../../src/decimal.js';

const MARKETS = { 'ETH-PERP': { price: 3000, step: 0.01 }, 'SOL-PERP': { price: 150, step: 0.1 } } as const;
type M = keyof typeof MARKETS;

describe('open_interest.update', () => {
  let db: TestDatabase;
  let engine: RunningEngine;
  let indexer: RunningIndexer;
  const clients: TestClient[] = [];
  let parties: SigningClient[] = [];
  // A fixed pseudo-random sequence: the same trades every run.
  let state = 7;
  const rand = (n: number) => ((state = (state * 1103515245 + 12345) % 2 ** 31), state % n);

  async function gateway(): Promise<TestGateway> {
    const gw = await testLiveGateway(stacks, engine, { DATABASE_URL: db.url, RATE_LIMIT_MAX: '1000000', AUTH_DISABLED: 'true' }, { markets: true });
    return gw;
  }

  /** One match: a maker rests, a taker takes all of it at the same price. */
  async function trade(): Promise<void> {
    const market = rand(2) === 0 ? 'ETH-PERP' : 'SOL-PERP';
    const { price, step } = MARKETS[market];
    const maker = parties[rand(parties.length)]!;
    const taker = parties.filter((p) => p !== maker)[rand(parties.length - 1)]!;
    const side = rand(2) === 0 ? 'buy' : 'sell';
    const size = ((1 + rand(8)) * step).toFixed(2);
    const p = String(price + rand(5));
    expect((await maker.placeOrder({ market, side: side === 'buy' ? 'sell' : 'buy', type: 'limit', size, price: p })).body.ok).toBe(true);
    expect((await taker.placeOrder({ market, side, type: 'limit', size, price: p })).body.status).toBe('filled');
  }

  async function quiet(gw: TestGateway): Promise<void> {
    await indexer.waitFor(engine.engine.log.maxSeq, 10_000);
    await waitFor(() => (gw.deps.live as LiveRuntime).status().maxSeq === engine.engine.log.maxSeq, 5_000, 'gateway at head');
    // GET /v1/markets caches the figure for up to a second (as its 24 h statistics): a deliberate wait
    // past that lifetime (a time bound, no event to wait for); it is also the bound within which a
    // client that did not ask for the kind must get none.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
  }

  async function restFigures(gw: TestGateway): Promise<Record<string, string>> {
    const r = await gw.app.inject('/v1/markets');
    expect(r.statusCode).toBe(200);
    return Object.fromEntries((r.json() as { items: { symbol: string; openInterest: string }[] }).items.map((m) => [m.symbol, m.openInterest]));
  }

  /** Per market: Σ open long sizes and Σ |open short sizes| over every party's GET positions. */
  async function fromPositions(gw: TestGateway): Promise<Record<string, { long: string; short: string }>> {
    const sums: Record<string, { long: bigint; short: bigint }> = {};
    for (const p of parties) {
      const r = await gw.app.inject(`/v1/users/${encodeURIComponent(p.id)}/positions?status=open&limit=100`);
      expect(r.statusCode).toBe(200);
      for (const pos of (r.json() as { items: { market: string; size: string }[] }).items) {
        const s = (sums[pos.market] ??= { long: 0n, short: 0n });
        const size = parseDecimal(pos.size);
        if (size > 0n) s.long += size;
        else s.short -= size;
      }
    }
    return Object.fromEntries(Object.entries(sums).map(([m, s]) => [m, { long: formatDecimal(s.long), short: formatDecimal(s.short) }]));
  }

  const lastByMarket = (frames: Msg[]) => {
    const out: Record<string, string> = {};
    for (const f of frames) if (f.kind === 'open_interest.update') out[f.market!] = f.payload.openInterest;
    return out;
  };

  const stacks = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    stacks.onTestFinished(() => db.drop());
    engine = await testEngine(stacks);
    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, migrate: false });
    stacks.onTestFinished(() => indexer.close());
    parties = ['a', 'b', 'c', 'd'].map((h) => new SigningClient(engine.url, makeParty(h)));
    for (const c of parties) {
      expect((await c.authorize()).body.ok).toBe(true);
      expect((await faucet(engine.url, engine.adminToken, c.id, '1000000')).body.ok).toBe(true);
    }
  });
  afterAll(async () => {
    for (const c of clients) c.ws.close();
  });

  it('equals GET /v1/markets and the sum of GET positions after trades, live and from the seed', { timeout: 120_000 }, async () => {
    // Trades before the gateway starts: they reach the frames through the seed only.
    for (let i = 0; i < 8; i++) await trade();
    await indexer.waitFor(engine.engine.log.maxSeq, 10_000);
    const first = await gateway();
    const listener = await connect(first.url, 'kinds=open_interest.update');
    clients.push(listener);
    await listener.waitFor((ms) => ms.filter((m) => m.snapshot).length === 3);
    await quiet(first);
    const seeded = lastByMarket(listener.frames());
    expect(Object.keys(seeded).sort()).toEqual(['BTC-PERP', 'ETH-PERP', 'SOL-PERP']);
    expect(seeded).toEqual(await restFigures(first));
    expect(Number(seeded['ETH-PERP']) + Number(seeded['SOL-PERP'])).toBeGreaterThan(0);

    // Trades while the client listens.
    for (let i = 0; i < 30; i++) await trade();
    await quiet(first);
    const live = listener.frames().filter((f) => !f.snapshot);
    expect(live.length).toBeGreaterThan(0);
    const rest = await restFigures(first);
    expect(lastByMarket(listener.frames())).toEqual(rest);
    const positions = await fromPositions(first);
    for (const m of Object.keys(MARKETS) as M[]) {
      // The property: long side = short side = the figure, recomputed from every party's positions.
      expect(positions[m] ?? { long: '0.0000000000', short: '0.0000000000' }).toEqual({ long: rest[m], short: rest[m] });
    }
    // At most one frame per market per batch, each after a match of its market that changed the figure.
    const keys = live.map((f) => `${f.market}@${f.seq}`);
    expect(new Set(keys).size).toBe(keys.length);
    const fills = new Map<number, string | undefined>(engine.engine.log.eventsSince(0).filter((e) => e.kind === 'engine.order_filled').map((e) => [e.seq, e.market]));
    for (const f of live) expect([fills.get(f.seq!), f.payload.asOfSeq]).toEqual([f.market, f.seq]);
    for (const m of Object.keys(MARKETS)) {
      const values = live.filter((f) => f.market === m).map((f) => f.payload.openInterest as string);
      for (let i = 1; i < values.length; i++) expect(values[i]).not.toBe(values[i - 1]);
    }

    // A gateway started now sends the same figures on subscribe, from the mirror alone.
    const second = await gateway();
    const fresh = await connect(second.url, 'kinds=open_interest.update&markets=ETH-PERP,SOL-PERP');
    clients.push(fresh);
    await fresh.waitFor((ms) => ms.filter((m) => m.snapshot).length === 2);
    expect(lastByMarket(fresh.frames())).toEqual({ 'ETH-PERP': rest['ETH-PERP'], 'SOL-PERP': rest['SOL-PERP'] });
    // A client that does not name the kind never gets it (opt-in).
    const plain = await connect(second.url, 'markets=ETH-PERP');
    clients.push(plain);
    await trade();
    await quiet(second);
    expect(plain.frames().filter((f) => f.kind === 'open_interest.update')).toEqual([]);
    expect([...listener.schemaErrors, ...fresh.schemaErrors]).toEqual([]);
  });
});
