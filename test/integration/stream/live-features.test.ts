// The live path's feature seam (src/contracts/live-feature.ts): the runtime calls every feature in
// list order for each event, publishes each feature's frames before the next feature runs, tells
// every feature each published frame, nests batch hooks, builds a connection's snapshot in list
// order, and a feature that throws from every hook stops neither the others nor the clients.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { loadConfig } from '../../../src/config/env.js';
import { Database } from '../../../src/db/database.js';
import { EngineClient } from '../../../src/engine/client.js';
import { Metrics } from '../../../src/metrics.js';
import { SessionKeys } from '../../../src/auth/session-keys.js';
import { LiveRuntime } from '../../../src/live.js';
import { liveFeatures } from '../../../src/live-features.js';
import type { LiveFeature } from '../../../src/contracts/live-feature.js';
import type { Frame } from '../../../src/contracts/frame.js';
import type { Subscription } from '../../../src/stream/subscription.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startScriptedEngine, waitFor, type ScriptedEngine } from '../../support/scripted-sse.js';
import { simpleMatch } from '../../unit/projections/fixtures.js';
import { connect, ticks, ts } from './helpers.js';

const FEATURE_FRAME_KIND = 'test.feature';

describe('live features (the runtime knows none of them)', () => {
  let engine: ScriptedEngine;
  let gw: TestGateway;
  let live: LiveRuntime;
  const log: string[] = [];
  let batchDepth = 0;
  let eventsInsideBatch = 0;
  let eventsOutsideBatch = 0;

  // Throws from every hook: the contract says it must cost nothing to the others.
  const broken: LiveFeature<Subscription> = {
    name: 'broken',
    start: () => Promise.reject(new Error('start')),
    event: () => {
      throw new Error('event');
    },
    frame: () => {
      throw new Error('frame');
    },
    snapshot: () => {
      throw new Error('snapshot');
    },
    subscriptionChanged: () => {
      throw new Error('watch');
    },
  };
  // Makes a frame of its own per tick (published before the next feature runs) and records what it is told.
  const maker: LiveFeature<Subscription> = {
    name: 'maker',
    event: (e) => {
      log.push(`maker:event:${e.seq}`);
      if (e.kind !== 'engine.tick_start') return;
      return [{ kind: FEATURE_FRAME_KIND as Frame['kind'], seq: e.seq, ts: e.ts, payload: { from: 'maker' } } as unknown as Frame];
    },
    batch: (deliver) => {
      batchDepth++;
      try {
        deliver();
      } finally {
        batchDepth--;
      }
    },
    snapshot: () => ({ frames: [], later: Promise.resolve([{ kind: FEATURE_FRAME_KIND, seq: 0, ts: ts(0), payload: { from: 'maker-later' } } as unknown as Frame]) }),
  };
  const recorder: LiveFeature<Subscription> = {
    name: 'recorder',
    event: (e) => {
      log.push(`recorder:event:${e.seq}`);
      if (batchDepth > 0) eventsInsideBatch++;
      else eventsOutsideBatch++;
    },
    frame: (f) => {
      if ((f.kind as string) === FEATURE_FRAME_KIND) log.push(`recorder:frame:${f.seq}`);
    },
    snapshot: () => ({ frames: [{ kind: FEATURE_FRAME_KIND, seq: 0, ts: ts(0), payload: { from: 'recorder-now' } } as unknown as Frame] }),
  };

  beforeAll(async () => {
    engine = await startScriptedEngine();
    const env = { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, AUTH_DISABLED: 'true', WS_ORDERBOOK_POLL_MS: '60000' };
    const config = loadConfig(env);
    const logger = pino({ level: 'silent' });
    const db = new Database(config, logger);
    const engineClient = new EngineClient({ baseUrl: config.engineBaseUrl, adminToken: config.engineAdminToken, timeoutMs: config.engineTimeoutMs, connections: 4 });
    const metrics = new Metrics({ defaultMetrics: false });
    const sessions = new SessionKeys(db);
    const gateway = liveFeatures({ config, logger, db, engine: engineClient, metrics, sessions });
    live = new LiveRuntime({
      config,
      logger,
      db,
      engine: engineClient,
      metrics,
      features: (context) => {
        const composed = gateway(context);
        return { features: [broken, ...composed.features, maker, recorder], queries: composed.queries };
      },
    });
    gw = await startGateway(env, { listen: true, overrides: { logger, db, engine: engineClient, metrics, sessions, live } });
    await live.start();
    await waitFor(() => live.status().connected, 5_000, 'bridge');
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('calls features in list order, publishes each one frames before the next runs, and isolates a throwing feature', async () => {
    const client = await connect(gw.url);
    // The snapshot: the recorder's frame now, the maker's later part after it (list order, later parts after).
    await client.waitFor((m) => m.some((x) => x.payload?.from === 'maker-later'));
    const snap = client.frames().filter((f) => (f.kind as string) === FEATURE_FRAME_KIND).map((f) => f.payload?.from as string);
    expect(snap).toEqual(['recorder-now', 'maker-later']);

    engine.push(...ticks(1, 3), simpleMatch(4, ts(4), '100', '1'));
    await client.waitFor((m) => m.some((x) => x.kind === 'trade' && x.seq === 4));
    // Events reach the maker then the recorder; the maker's frame of an event reached the recorder
    // (frame hook) before the recorder saw that event, and before the next event reached anyone.
    expect(log).toEqual([
      'maker:event:1', 'recorder:frame:1', 'recorder:event:1',
      'maker:event:2', 'recorder:frame:2', 'recorder:event:2',
      'maker:event:3', 'recorder:frame:3', 'recorder:event:3',
      'maker:event:4', 'recorder:event:4',
    ]);
    // The broken feature stopped nothing: clients got the core frames and the maker's frames in seq order.
    const shown = new Set(['engine.tick_start', 'trade', FEATURE_FRAME_KIND]);
    const live1 = client.frames().filter((f) => f.seq! > 0 && shown.has(f.kind)).map((f) => `${f.seq}:${f.kind}`);
    expect(live1).toEqual([
      '1:engine.tick_start', `1:${FEATURE_FRAME_KIND}`,
      '2:engine.tick_start', `2:${FEATURE_FRAME_KIND}`,
      '3:engine.tick_start', `3:${FEATURE_FRAME_KIND}`,
      '4:trade',
    ]);
    // Every delivered group ran inside the maker's batch hook (nested in the books' and the hub's).
    expect(eventsInsideBatch).toBe(4);
    expect(eventsOutsideBatch).toBe(0);
    client.ws.close();
  });
});
