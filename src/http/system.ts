// System routes: liveness, readiness, Prometheus metrics (unprefixed, docs/rest.md), and the server's clock.
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { registerReplicaProbe } from './replica-readiness.js';

const ReadyBody = Type.Object(
  {
    error: Type.Optional(Type.String({ description: 'On 503 only: the reasons as one message' })),
    code: Type.Optional(Type.Literal('not_ready', { description: 'On 503 only' })),
    status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')]),
    reasons: Type.Array(Type.String(), { description: 'Why the gateway is degraded; empty when ready' }),
    database: Type.Object({
      configured: Type.Boolean(),
      reachable: Type.Boolean(),
      latencyMs: Type.Integer(),
      error: Type.Optional(Type.String()),
    }),
    schema: Type.Object({
      current: Type.Boolean({ description: 'Every take-profit/stop-loss v2 column exists' }),
      missingMigrations: Type.Array(Type.String()),
      fix: Type.Optional(Type.String()),
    }),
    engine: Type.Object({
      reachable: Type.Boolean(),
      version: Type.Optional(Type.String()),
      buildDate: Type.Optional(Type.String()),
      error: Type.Optional(Type.String()),
    }),
    stream: Type.Object({
      enabled: Type.Boolean({ description: 'false when ENGINE_ADMIN_TOKEN is unset (then degraded in production) or before the live runtime started' }),
      connected: Type.Boolean({ description: 'The admin SSE bridge is connected (with NATS_URL: the JetStream consumer runs and has caught up)' }),
      source: Type.Optional(Type.Union([Type.Literal('sse'), Type.Literal('jetstream')], { description: 'Where engine events come from' })),
      gap: Type.Optional(Type.String({ description: 'A gap the bridge could not fill, if any' })),
      lag: Type.Optional(
        Type.Object(
          {
            engineHead: Type.Union([Type.Integer(), Type.Null()], { description: "The engine's newest seq as last observed (its /healthz maxSeq, else the stream's last message)" }),
            events: Type.Union([Type.Integer(), Type.Null()], { description: 'Events the replica lacks up to that head' }),
            seconds: Type.Number({ description: 'How long ago the replica last held everything the engine had' }),
            behind: Type.Boolean({ description: 'More than STREAM_BEHIND_MAX_S behind: degraded' }),
            stalled: Type.Boolean({ description: 'Behind and not moving: it is recovering (new consumer, database fill)' }),
          },
          { description: 'With NATS_URL: this replica measured against the engine head (docs/fleet.md "Behind the engine")' },
        ),
      ),
    }),
    engineMaxSeq: Type.Union([Type.Integer(), Type.Null()]),
    commitments: Type.Optional(
      Type.Object(
        {
          match: Type.Integer({ description: 'Engine claims equal to what the gateway recomputed' }),
          mismatch: Type.Integer({ description: 'Engine claims that differ: incidents' }),
          skipped: Type.Integer({ description: 'Claims of batches begun before this process saw the stream (not recomputable)' }),
          incidents: Type.Array(
            Type.Object(
              {
                kind: Type.Union([Type.Literal('user_batch'), Type.Literal('manifest')]),
                seq: Type.Integer({ description: 'Seq of the claim event' }),
                party: Type.Optional(Type.String()),
                userSeq: Type.Optional(Type.Integer()),
                batchNum: Type.Optional(Type.Integer()),
                firstSeq: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
                lastSeq: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
                claimedRoot: Type.String(),
                computedRoot: Type.Union([Type.String(), Type.Null()]),
                reasons: Type.Array(Type.String(), { description: 'What differs: root, eventCount, prevRoot, userSeq, userBatchCount, seqRange, batchNum' }),
              },
              { additionalProperties: false },
            ),
            { description: 'The latest mismatches (at most 10), newest last' },
          ),
        },
        {
          description:
            'The engine commitments recomputed from the streamed events (docs/verification.md). A mismatch is named here and ' +
            'counted in bff_commitments_total{result="mismatch"}; it does not make the gateway unready',
        },
      ),
    ),
    redis: Type.Optional(
      Type.Object(
        {
          configured: Type.Boolean(),
          reachable: Type.Boolean(),
          error: Type.Optional(Type.String()),
          replicas: Type.Optional(
            Type.Object(
              { wanted: Type.Integer(), connected: Type.Integer() },
              { description: 'With REDIS_WAIT_REPLICAS > 0: the replicas that must acknowledge, and those connected to the primary; fewer connected: degraded (every signed call refused 503)' },
            ),
          ),
          replayMemory: Type.Optional(
            Type.Object(
              { refusingSignedBefore: Type.Optional(Type.String({ format: 'date-time' })) },
              {
                description:
                  'Present while the signature replay memory in Redis was found lost (Redis restarted empty or flushed): signed requests timestamped before ' +
                  '`refusingSignedBefore` (the loss plus SIGNATURE_WINDOW_MS) answer 503 shared_state_unavailable with Retry-After. It does not make the replica unready ' +
                  '(every replica is in the same window; docs/adr/0155)',
              },
            ),
          ),
        },
        { description: 'With REDIS_URL only. Unreachable: signed requests and the faucet answer 503 shared_state_unavailable, rate limits let requests through (docs/fleet.md)' },
      ),
    ),
  },
  { description: 'Readiness: 200 when ready, 503 when degraded, with the reasons' },
);

async function readiness({ db, engine, live, fleet, config }: Pick<FastifyInstance, 'db' | 'engine' | 'live' | 'fleet' | 'config'>) {
  const reasons: string[] = [];
  const [ping, health, redis] = await Promise.all([
    db.ping(),
    engine.health(2_000).then(
      (h) => ({ reachable: true as const, version: h.version, buildDate: h.buildDate, maxSeq: h.maxSeq }),
      () => ({ reachable: false as const, error: 'unreachable' }),
    ),
    fleet ? fleet.status() : Promise.resolve(null),
  ]);
  if (redis && !redis.reachable) reasons.push('redis unreachable: signed requests and the faucet refused (503), rate limits open');
  else if (redis?.replicas && redis.replicas.connected < redis.replicas.wanted) {
    reasons.push(`redis replicas: ${redis.replicas.connected} of the ${redis.replicas.wanted} REDIS_WAIT_REPLICAS connected: signed requests and the faucet refused (503)`);
  }
  if (!db.configured) reasons.push('DATABASE_URL is not set');
  else if (!ping.ok) reasons.push('database unreachable');

  let schema: { current: boolean; missingMigrations: string[]; fix?: string } = { current: false, missingMigrations: [] };
  if (ping.ok) {
    try {
      const s = await db.schema();
      schema = { current: s.current, missingMigrations: s.missing };
      if (!s.current) {
        schema.fix = 'migrate the indexer, then redeploy the gateway';
        reasons.push(`indexer schema behind 0015_fired_limit (missing ${s.missing.join(', ')})`);
      }
    } catch {
      reasons.push('database unreachable');
    }
  }
  if (!health.reachable) reasons.push('engine unreachable');

  const streamStatus = live?.status() ?? { enabled: false, connected: false, maxSeq: null };
  // The spec lets a gateway without the admin token run (clients receive nothing); in production
  // that is a deployment mistake, so it is not "ready".
  if (config.engineAdminToken === null && config.nodeEnv === 'production') reasons.push('ENGINE_ADMIN_TOKEN is not set: the stream is disabled');
  if (streamStatus.enabled && !streamStatus.connected) {
    reasons.push(streamStatus.source === 'jetstream' ? 'JetStream source down or catching up' : 'SSE bridge down');
  }
  if (streamStatus.gap) reasons.push(`SSE bridge gap: ${streamStatus.gap}`);
  const lag = streamStatus.enabled ? streamStatus.lag : undefined;
  if (lag?.behind) {
    reasons.push(`stream behind the engine: ${lag.events ?? 'unknown'} events, ${Math.round(lag.seconds)} s${lag.stalled ? ' (stalled, recovering)' : ' (catching up)'}`);
  }

  const commitments = live?.commitmentStatus() ?? null;
  const engineMaxSeq = streamStatus.maxSeq ?? (health.reachable ? (health.maxSeq ?? null) : null);
  return {
    status: reasons.length === 0 ? ('ready' as const) : ('degraded' as const),
    reasons,
    database: { configured: db.configured, reachable: ping.ok, latencyMs: ping.latencyMs, ...(ping.error ? { error: ping.error } : {}) },
    schema,
    engine: health.reachable
      ? { reachable: true, ...(health.version ? { version: health.version } : {}), ...(health.buildDate ? { buildDate: health.buildDate } : {}) }
      : { reachable: false, error: health.error },
    stream: {
      enabled: streamStatus.enabled,
      connected: streamStatus.connected,
      ...(streamStatus.source ? { source: streamStatus.source } : {}),
      ...(streamStatus.gap ? { gap: streamStatus.gap } : {}),
      ...(lag ? { lag: { ...lag, seconds: Math.round(lag.seconds * 10) / 10 } } : {}),
    },
    engineMaxSeq,
    ...(commitments ? { commitments } : {}),
    ...(redis ? { redis } : {}),
  };
}

export const TimeBody = Type.Object(
  {
    serverTime: Type.Integer({ description: 'The gateway clock, ms since the Unix epoch' }),
    iso: Type.String({ format: 'date-time', description: 'The same instant as ISO 8601 UTC with milliseconds' }),
  },
  { description: 'The gateway clock' },
);

export const systemRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // A browser cannot read the Date header of a cross-origin answer, and a client whose clock is off
  // by more than 30 s fails every signed call: this route gives it the clock to sign against.
  app.get(
    '/v1/time',
    {
      schema: {
        operationId: 'getTime',
        security: [],
        tags: ['system'],
        summary: 'Server time, for clients that correct their clock before signing',
        description:
          'Public. A signed request is accepted only within ±30 s of this clock; a client measures its offset as ' +
          '`serverTime - (sent + received) / 2` and signs with `Date.now() + offset`. Never cached.',
        response: { 200: TimeBody },
      },
    },
    async (_req, reply) => {
      const now = app.clock.now();
      void reply.header('cache-control', 'no-store');
      return { serverTime: now, iso: new Date(now).toISOString() };
    },
  );

  app.get(
    '/healthz',
    {
      schema: {
        tags: ['system'],
        summary: 'Liveness',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  registerReplicaProbe(app);

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['system'],
        summary: 'Readiness: database, indexer schema, engine, SSE bridge, max engine seq',
        description:
          'The full report of every dependency: 503 as soon as one is missing. In a fleet, route traffic by ' +
          '/readyz/replica instead, which judges the replica alone (a shared dependency down would make this 503 on every replica at once).',
        response: { 200: ReadyBody, 503: ReadyBody },
      },
    },
    async (_req, reply) => {
      const body = await readiness(app);
      if (body.status === 'ready') return reply.code(200).send(body);
      // A 503 carries the gateway's error fields too, so generic clients read it like any error.
      return reply.code(503).send({ error: `not ready: ${body.reasons.join('; ')}`, code: 'not_ready', ...body });
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        tags: ['system'],
        summary: 'Prometheus text exposition (includes bff_engine_max_seq)',
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'Prometheus text format 0.0.4' }) },
      },
    },
    async (_req, reply) => {
      const text = await app.metrics.registry.metrics();
      return reply.type(app.metrics.registry.contentType).send(text);
    },
  );
};
