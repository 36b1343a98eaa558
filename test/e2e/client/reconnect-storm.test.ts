// Gapless reconnect under load: the reference engine driven by the market simulator, the indexer
// and the gateway (with a short replay history, so some resumes fall beyond it and take the REST
// path), and two stream clients — one public (`trade` of BTC-PERP), one party-scoped
// (`position.update` of a simulator bot) — forced to reconnect 120 times each, some after
// outages long enough to leave the history. Every frame they deliver is compared with the engine's
// own event log: zero lost, zero duplicated, order kept.
import type { FrameKind } from '../../../packages/client/src/engine-events.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine, testGateway } from '../../support/stacks.js';
import { startIndexer, type RunningIndexer } from '../../../sandbox/indexer/indexer.js';
import { botParties, startSimulator, type RunningSimulator } from '../../../sandbox/simulator/simulator.js';
import { GatewayClient, StreamClient, type EngineEvent, type StreamMessage, type WebSocketCtor } from '../../../packages/client/src/index.js';
import type { LiveRuntime } from '../../../src/live.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import type { TestGateway } from '../../support/gateway.js';
import { eventually } from '../../support/eventually.js';

const SEED = 5;
const FORCED = 120; // forced reconnects per client (240 in all)
const OUTAGE_EVERY = 15; // every n-th is a long outage (beyond the replay history)

type Item = string; // "seq" or "seq:positionId": one expected frame
type Leg = { party?: string; positionId?: string };
const legsOf = (e: { payload: Record<string, unknown> }) => (e.payload.legs ?? []) as Leg[];

interface Watched {
  name: string;
  stream: StreamClient;
  items: Item[];
  gaps: number;
  backfilled: number;
  firstHead: number | null;
  state: string;
  errors: string[];
  /** What the engine log says this client must have received, after its first head. */
  expected(log: EngineEvent[]): Item[];
}

describe('reconnect storm', () => {
  let db: TestDatabase;
  let engine: RunningEngine;
  let indexer: RunningIndexer;
  let gw: TestGateway;
  let sim: RunningSimulator | null = null;
  let ticker: ReturnType<typeof setInterval>;

  const stacks = fileScope();
  beforeAll(async () => {
    db = await createTestDatabase();
    stacks.onTestFinished(() => db.drop());
    engine = await testEngine(stacks);
    ticker = setInterval(() => engine.engine.tick(), 200);
    indexer = await startIndexer({ databaseUrl: db.url, engineUrl: engine.url, adminToken: engine.adminToken, migrate: false });
    stacks.onTestFinished(() => indexer.close());
    gw = await testGateway(
      stacks,
      { DATABASE_URL: db.url, ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, AUTH_DISABLED: 'true', WS_HISTORY_SIZE: '300', RATE_LIMIT_MAX: '1000000' },
      { listen: true },
    );
    await (gw.deps.live as LiveRuntime).start();
  }, 60_000);
  afterAll(async () => {
    clearInterval(ticker);
    await sim?.stop();
  });

  it('loses nothing, repeats nothing and keeps the order through hundreds of forced reconnects', { timeout: 120_000 }, async () => {
    const party = botParties(SEED, 1)[0]!;
    const client = new GatewayClient({ baseUrl: gw.url, retry: { retries: 5, baseDelayMs: 20 } });
    const watch = (name: string, options: { kinds: FrameKind[]; markets?: [string, ...string[]]; party?: string[] }, toItems: (m: StreamMessage) => Item[], expected: Watched['expected']): Watched => {
      const w: Watched = {
        name,
        items: [],
        gaps: 0,
        backfilled: 0,
        firstHead: null,
        state: 'stopped',
        errors: [],
        expected,
        stream: new StreamClient({
          client,
          ...options,
          WebSocket: WebSocket as unknown as WebSocketCtor,
          reconnect: { baseDelayMs: 5, maxDelayMs: 50 },
          gapPollMs: 20,
          onState: (state) => (w.state = state),
          onError: (err) => w.errors.push(String(err)),
          onMessage: (m) => {
            if (m.source === 'control') {
              if (m.message.kind === 'stream.gap') w.gaps++;
              if (m.message.kind === 'stream.subscribed' && w.firstHead === null) w.firstHead = (m.message.payload as { headSeq?: number | null }).headSeq ?? 0;
              return;
            }
            if (m.source === 'backfill') w.backfilled++;
            w.items.push(...toItems(m));
          },
        }),
      };
      return w;
    };
    const live = (m: StreamMessage) => (m.source === 'live' && !m.frame.snapshot ? m.frame : null);

    const publicTrades = watch(
      'public trades',
      { kinds: ['trade'], markets: ['BTC-PERP'] },
      (m) => {
        const f = live(m);
        if (f) return f.kind === 'trade' ? [String(f.seq)] : [];
        return m.source === 'backfill' && m.event.kind === 'engine.order_filled' && m.event.market === 'BTC-PERP' ? [String(m.event.seq)] : [];
      },
      (log) => log.filter((e) => e.kind === 'engine.order_filled' && e.market === 'BTC-PERP').map((e) => String(e.seq)),
    );
    const partyPositions = watch(
      'party positions',
      { kinds: ['position.update'], party: [party] },
      (m) => {
        const f = live(m);
        if (f) return f.kind === 'position.update' ? [`${f.seq}:${f.payload.positionId}`] : [];
        if (m.source !== 'backfill' || m.event.kind !== 'engine.order_filled') return [];
        return legsOf(m.event).filter((l) => l.party === party).map((l) => `${m.event.seq}:${l.positionId}`);
      },
      (log) => log.filter((e) => e.kind === 'engine.order_filled').flatMap((e) => legsOf(e).filter((l) => l.party === party).map((l) => `${e.seq}:${l.positionId}`)),
    );
    const watched = [publicTrades, partyPositions];

    sim = await startSimulator({ engineUrl: engine.url, adminToken: engine.adminToken, rate: 120, bots: 4, seed: SEED });
    for (const w of watched) w.stream.start();
    await eventually(() => watched.every((w) => w.firstHead !== null), { what: 'both clients subscribed', timeoutMs: 20_000 });

    // The storm: each client is dropped FORCED times; every OUTAGE_EVERY-th time it stays away
    // until the engine has moved on by more than the gateway's replay history holds.
    const storm = async (w: Watched) => {
      for (let i = 1; i <= FORCED; i++) {
        // Drop a connection that is up (dropping one still connecting would only test the backoff).
        await eventually(() => w.state === 'live', { what: `${w.name} live before drop ${i} (errors: ${w.errors.slice(-3).join('; ')})`, timeoutMs: 20_000 });
        if (i % OUTAGE_EVERY === 0) {
          w.stream.stop();
          const from = engine.engine.log.maxSeq;
          await eventually(() => engine.engine.log.maxSeq > from + 120, { what: 'the engine to move on', timeoutMs: 20_000 });
          w.stream.start();
        } else {
          w.stream.reconnectNow();
        }
        await new Promise((r) => setTimeout(r, 5 + (i % 5) * 10));
      }
    };
    await Promise.all(watched.map(storm));
    await sim.stop();
    sim = null;

    for (const w of watched) {
      // Orders in flight when the simulator stopped may still fill: judge against the log as it is now.
      const expected = () => w.expected(engine.engine.log.eventsSince(w.firstHead!));
      await eventually(() => w.items.length >= expected().length, { what: () => `${w.name}: every frame (${w.items.length}/${expected().length}; state ${w.state}; errors: ${w.errors.slice(-3).join('; ')})`, timeoutMs: 30_000, everyMs: 200 });
      // Exact equality: same frames, none missing, none twice, in engine order.
      expect(w.items, w.name).toEqual(expected());
      expect(w.items.length, `${w.name} saw a busy market`).toBeGreaterThan(50);
      w.stream.stop();
    }
    // Both paths were taken: replay after short drops, REST after outages beyond the history.
    expect(publicTrades.gaps + partyPositions.gaps).toBeGreaterThan(0);
    expect(publicTrades.backfilled + partyPositions.backfilled).toBeGreaterThan(0);
  });
});
