// The replica probe, GET /readyz/replica: what a load balancer or Kubernetes routes traffic by
// (docs/fleet.md "Probes"). It judges this process alone: started, caught up with its engine event
// stream, not stalled behind the engine's head, its event loop answering in time, its own
// configuration complete. It never asks a shared dependency (PostgreSQL, Redis, NATS, the engine):
// their outage is the same on every replica, and a probe that followed them would take every
// replica out of the balancer at once, turning a partial outage (no signed calls without Redis, no
// lists without PostgreSQL) into a total one. A request a replica cannot serve for lack of a
// dependency is answered with that request's own JSON error and `code`. `/readyz` keeps the full
// report of every dependency for people and dashboards.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { LiveStatus } from '../stream/live-view.js';

/** An event loop that was held this long within the last window is not ready (its requests wait as long). */
export const EVENT_LOOP_STALL_MS = 2_000;
/** The window over which the longest event loop delay is kept: two probe periods of the shipped manifests. */
const WINDOW_MS = 5_000;

export const ReplicaReadyBody = Type.Object(
  {
    error: Type.Optional(Type.String({ description: 'On 503 only: the reasons as one message' })),
    code: Type.Optional(Type.Literal('replica_not_ready', { description: 'On 503 only' })),
    status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
    reasons: Type.Array(Type.String(), { description: 'Why this replica should not get traffic; empty when ready' }),
    checks: Type.Object({
      started: Type.Boolean({ description: 'The live runtime has started (the process listens and takes engine events)' }),
      caughtUp: Type.Boolean({ description: "The start-up catch-up is done (with JetStream: the stream's head at start projected)" }),
      stalled: Type.Boolean({ description: "Behind the engine's head and not moving" }),
      streamConfigured: Type.Boolean({ description: 'ENGINE_ADMIN_TOKEN is set (without it, not ready in production)' }),
      eventLoopDelayMs: Type.Integer({ description: `The longest event loop delay of the last ${WINDOW_MS / 1000} s; over ${EVENT_LOOP_STALL_MS} ms: not ready` }),
    }),
  },
  {
    description:
      'The replica probe: 200 when this replica can take traffic, 503 `replica_not_ready` with the reasons when not. ' +
      'Shared dependencies (database, Redis, NATS, engine) are not judged here; see /readyz.',
  },
);

/** The longest event loop delay over the last one or two windows, in ms. */
export class EventLoopWatch {
  private readonly histogram = monitorEventLoopDelay({ resolution: 20 });
  private previousMaxMs = 0;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.previousMaxMs = this.histogram.max / 1e6;
      this.histogram.reset();
    }, WINDOW_MS);
    this.timer.unref();
  }

  get maxMs(): number {
    // The histogram's max is 0 before its first sample, and can read as a huge number when empty.
    const current = this.histogram.count > 0 ? this.histogram.max / 1e6 : 0;
    return Math.round(Math.max(current, this.previousMaxMs));
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}

export interface ReplicaVerdict {
  status: 'ready' | 'not_ready';
  reasons: string[];
  checks: { started: boolean; caughtUp: boolean; stalled: boolean; streamConfigured: boolean; eventLoopDelayMs: number };
}

/**
 * The verdict from what this process knows. `live` null: an app built without the live runtime
 * (nothing to start). Without ENGINE_ADMIN_TOKEN the replica is complete only outside production
 * (the spec lets clients connect and receive nothing; a production deployment without events is a
 * mistake to stop at the first replica of a rollout, not to serve).
 */
export function judgeReplica(input: { live: LiveStatus | null; tokenSet: boolean; production: boolean; eventLoopDelayMs: number }): ReplicaVerdict {
  const { live, tokenSet, production, eventLoopDelayMs } = input;
  const reasons: string[] = [];
  const started = live === null || !tokenSet || live.enabled;
  const caughtUp = started && (live === null || !tokenSet || live.caughtUp !== false);
  const stalled = live?.stalled !== undefined;
  if (!tokenSet && production) reasons.push('ENGINE_ADMIN_TOKEN is not set: the stream is disabled');
  if (!started) reasons.push('starting');
  else if (!caughtUp) reasons.push('catching up with the engine event stream');
  if (stalled) reasons.push(`stalled: ${live!.stalled}`);
  if (eventLoopDelayMs > EVENT_LOOP_STALL_MS) reasons.push(`event loop held ${eventLoopDelayMs} ms (over ${EVENT_LOOP_STALL_MS} ms)`);
  return {
    status: reasons.length === 0 ? 'ready' : 'not_ready',
    reasons,
    checks: { started, caughtUp, stalled, streamConfigured: tokenSet, eventLoopDelayMs },
  };
}

/** GET /readyz/replica, registered by the system routes. */
export function registerReplicaProbe(app: FastifyInstance): void {
  const loop = new EventLoopWatch();
  app.addHook('onClose', (_instance, done) => {
    loop.stop();
    done();
  });
  app.get(
    '/readyz/replica',
    {
      schema: {
        tags: ['system'],
        summary: "Replica probe for load balancers and Kubernetes: this replica's own state, no shared dependency",
        description:
          'Started, caught up with the engine event stream, not stalled behind the engine head, event loop answering ' +
          `(no delay over ${EVENT_LOOP_STALL_MS} ms in the last ${WINDOW_MS / 1000} s), and, in production, ENGINE_ADMIN_TOKEN set. ` +
          'A database, Redis, NATS or engine outage does not make it 503: each request that needs the missing dependency answers its own JSON error with a `code` ' +
          '(docs/fleet.md "Probes"). Use it as the readiness probe; /healthz for liveness; /readyz for the full report.',
        response: { 200: ReplicaReadyBody, 503: ReplicaReadyBody },
      },
    },
    async (_req, reply) => {
      const verdict = judgeReplica({
        live: app.live ? app.live.status() : null,
        tokenSet: app.config.engineAdminToken !== null,
        production: app.config.nodeEnv === 'production',
        eventLoopDelayMs: loop.maxMs,
      });
      void reply.header('cache-control', 'no-store');
      if (verdict.status === 'ready') return reply.code(200).send(verdict);
      return reply.code(503).send({ error: `replica not ready: ${verdict.reasons.join('; ')}`, code: 'replica_not_ready', ...verdict });
    },
  );
}
