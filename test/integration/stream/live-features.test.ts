// The live path's feature seam (src/contracts/live-feature.ts): the runtime calls every feature in
// list order for each event, publishes each feature's frames before the next feature runs, tells
// every feature each published frame, ends every group of events once with `endOfBatch` (in list
// order, its frames in the group's write), builds a connection's snapshot in list order, and a
// feature that throws from every hook stops neither the others nor the clients.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { loadConfig } from '../../../src/config/env.js';
import { Database } from '../../../src/db/database.js';
import { EngineClient } from '../../../src/engine/client.js';
import { Metrics } from '../../../src/metrics.js';
import { SessionKeys } from '../../../src/auth/session-keys.js';
import { LiveRuntime } from '../../../src/live.js';
import { engineEventSource } from '../../../src/live-source.js';
import { liveFeatures } from '../../../src/live-features.js';
import type { LiveFeature } from '../../../src/contracts/live-feature.js';
import type { Frame } from '../../../src/contracts/frame.js';
import type { Subscription } from '../../../src/stream/subscription.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startScriptedEngine, waitFor, type ScriptedEngine } from '../../support/scripted-sse.js';
import { simpleMatch, tick } from '../../unit/projections/fixtures.js';
import { connect, ticks, ts } from './helpers.js';

const FEATURE_FRAME_KIND = 'test.feature';

describe('live features (the runtime knows none of them)', () => {
  let engine: ScriptedEngine;
  let gw: TestGateway;
  let live: LiveRuntime;
  const log: string[] = [];
  let publish: ((frame: Frame) => number) | null = null;
  let lastSeen = 0;

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
    endOfBatch: () => {
      throw new Error('endOfBatch');
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
    // One frame per group, published at its end: it must reach clients after the group's own frames.
    endOfBatch: () => {
      log.push('maker:end');
      publish!({ kind: FEATURE_FRAME_KIND as Frame['kind'], seq: lastSeen, ts: ts(lastSeen), payload: { from: 'maker-end' } } as unknown as Frame);
    },
    snapshot: () => ({ frames: [], later: Promise.resolve([{ kind: FEATURE_FRAME_KIND, seq: 0, ts: ts(0), payload: { from: 'maker-later' } } as unknown as Frame]) }),
  };
  const recorder: LiveFeature<Subscription> = {
    name: 'recorder',
    event: (e) => {
      log.push(`recorder:event:${e.seq}`);
      lastSeen = e.seq;
    },
    endOfBatch: () => log.push('recorder:end'),
    frame: (f) => {
      if ((f.kind as string) === FEATURE_FRAME_KIND && f.payload.from === 'maker') log.push(`recorder:frame:${f.seq}`);
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
        publish = context.publish;
        const composed = gateway(context);
        return { ...composed, features: [broken, ...composed.features, maker, recorder] };
      },
      source: engineEventSource({ config, logger, db, engine: engineClient, metrics }),
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
    // (Ends of groups are checked below: how the four events were grouped is the network's choice.)
    expect(log.filter((x) => !x.endsWith(':end'))).toEqual([
      'maker:event:1', 'recorder:frame:1', 'recorder:event:1',
      'maker:event:2', 'recorder:frame:2', 'recorder:event:2',
      'maker:event:3', 'recorder:frame:3', 'recorder:event:3',
      'maker:event:4', 'recorder:event:4',
    ]);
    // Every group ended once, in list order (maker, then recorder: the broken one's throw cost
    // nothing), after events only, and the last event's group ended too.
    const ends = log.map((x, i) => [x, i] as const).filter(([x]) => x.endsWith(':end'));
    expect(ends.length).toBeGreaterThanOrEqual(2);
    for (let k = 0; k < ends.length; k += 2) {
      const [[a, i], [b, j]] = [ends[k]!, ends[k + 1]!];
      expect([a, b, j]).toEqual(['maker:end', 'recorder:end', i + 1]);
      expect(log[i - 1]).toMatch(/^recorder:event:/); // a group ends after an event, never twice in a row
    }
    expect(log.at(-1)).toBe('recorder:end');
    // The broken feature stopped nothing: clients got the core frames and the maker's frames in seq
    // order, each group's end frame after the group's own frames.
    await client.waitFor((m) => m.some((x) => x.payload?.from === 'maker-end' && x.seq === 4));
    const shown = new Set(['engine.tick_start', 'trade', FEATURE_FRAME_KIND]);
    const all = client.frames().filter((f) => f.seq! > 0 && shown.has(f.kind));
    expect(all.filter((f) => f.payload?.from !== 'maker-end').map((f) => `${f.seq}:${f.kind}`)).toEqual([
      '1:engine.tick_start', `1:${FEATURE_FRAME_KIND}`,
      '2:engine.tick_start', `2:${FEATURE_FRAME_KIND}`,
      '3:engine.tick_start', `3:${FEATURE_FRAME_KIND}`,
      '4:trade',
    ]);
    all.forEach((f, i) => {
      if (f.payload?.from === 'maker-end') expect(all.slice(i + 1).every((g) => g.seq! > f.seq!)).toBe(true);
    });
    expect(all.at(-1)).toMatchObject({ seq: 4, payload: { from: 'maker-end' } });
    expect(all.filter((f) => f.payload?.from === 'maker-end')).toHaveLength(ends.length / 2);
    client.ws.close();
  });

  it('endOfBatch: once per batch of the source, after all of its events, in list order', async () => {
    // The runtime's own sink driven as a source drives it, with features that record what they are told.
    const seen: string[] = [];
    const probe = (name: string): LiveFeature<Subscription> => ({
      name,
      event: (e) => void seen.push(`${name}:${e.seq}`),
      endOfBatch: () => void seen.push(`${name}:end`),
    });
    const thrower: LiveFeature<Subscription> = { name: 'thrower', event: () => { throw new Error('event'); }, endOfBatch: () => { throw new Error('end'); } };
    const env = { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, AUTH_DISABLED: 'true' };
    const config = loadConfig(env);
    const logger = pino({ level: 'silent' });
    const db = new Database(config, logger);
    const engineClient = new EngineClient({ baseUrl: config.engineBaseUrl, adminToken: config.engineAdminToken, timeoutMs: config.engineTimeoutMs, connections: 1 });
    const metrics = new Metrics({ defaultMetrics: false });
    const runtime = new LiveRuntime({
      config, logger, db, engine: engineClient, metrics,
      features: () => ({ features: [probe('a'), thrower, probe('b')], queries: { orderOutcome: async () => null, commitmentStatus: () => null }, startPoint: async () => null }),
      source: engineEventSource({ config, logger, db, engine: engineClient, metrics }),
    });
    const { sink } = runtime;
    sink.events([tick(1, ts(1)), tick(2, ts(2)), tick(3, ts(3))]);
    sink.events([tick(4, ts(4))]);
    expect(seen).toEqual([
      'a:1', 'b:1', 'a:2', 'b:2', 'a:3', 'b:3', 'a:end', 'b:end',
      'a:4', 'b:4', 'a:end', 'b:end',
    ]);
    await runtime.stop();
    await engineClient.close();
    await db.close();
  });
});
