// The gateway's dependencies as Fastify decorators, registered once at the root: every route plugin
// reaches them as `app.db`, `app.engine`, … (typed below by declaration merging). The edge names
// what it needs (HttpDeps); it never imports the composition root.
import fp from 'fastify-plugin';
import type { ReplayGuard } from '../contracts/replay-guard.js';
import { systemClock, type Clock } from '../contracts/clock.js';
import type { SessionKeys } from '../auth/session-keys.js';
import type { Config } from '../config/env.js';
import type { Database } from '../db/database.js';
import type { EngineClient } from '../engine/client.js';
import type { LiveView } from '../stream/live-view.js';
import type { Metrics } from '../metrics.js';
import type { SharedState } from '../fleet/shared-state.js';
import { workBudgets, type WorkBudgets } from './work-budgets.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    /** The gateway's time and timers (src/contracts/clock.ts). */
    clock: Clock;
    db: Database;
    engine: EngineClient;
    metrics: Metrics;
    sessions: SessionKeys;
    /** Single-use memory of verified signatures. */
    replays: ReplayGuard;
    /** The live stream runtime, as the edge sees it; null in apps built without it. */
    live: LiveView | null;
    /** State shared by the replicas of a fleet (REDIS_URL); null: per process. */
    fleet: SharedState | null;
    /** Per-address budgets of the work a proof or a snapshot makes (work-budgets.ts): one set for REST and the stream. */
    workBudgets: WorkBudgets;
  }
}

/** What the routes are given (the composition root's AppDeps is one). */
export interface HttpDeps {
  config: Config;
  /** Default systemClock. */
  clock?: Clock;
  db: Database;
  engine: EngineClient;
  metrics: Metrics;
  sessions: SessionKeys;
  replays: ReplayGuard;
  live: LiveView | null;
  fleet: SharedState | null;
}

export const dependencies = fp<{ deps: HttpDeps }>(
  async (app, { deps }) => {
    app.decorate('config', deps.config);
    app.decorate('clock', deps.clock ?? systemClock);
    app.decorate('db', deps.db);
    app.decorate('engine', deps.engine);
    app.decorate('metrics', deps.metrics);
    app.decorate('sessions', deps.sessions);
    app.decorate('replays', deps.replays);
    app.decorate('live', deps.live);
    app.decorate('fleet', deps.fleet);
    app.decorate('workBudgets', workBudgets(deps.config, deps.fleet?.redis ?? null, deps.clock ?? systemClock));
  },
  { name: 'dependencies', fastify: '5.x' },
);
