// Rate limit of the trading and faucet routes (RATE_LIMIT_MAX requests per RATE_LIMIT_WINDOW_MS).
// Registered inside the trading plugin, so it covers only the routes of that plugin.
//
// Key: the party, when the request names one (`X-User`) together with a session this process
// knows belongs to it (`X-Session-Id`); otherwise the client IP. Per party, because many users
// share NAT addresses and one user can have many. The session condition is what stops a client
// from escaping its IP budget by inventing a fresh `X-User` per request: made-up parties have no
// known session and are counted under the IP. The check is a memory lookup, not a signature
// verification (the limiter must stay cheaper than the work it protects).
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config/env.js';
import type { SessionKeys } from '../../auth/session-keys.js';
import { ApiError } from '../errors.js';
import { PARTY_PATTERN } from '../schemas.js';
import type { RedisHandle } from '../../fleet/redis.js';
import { redisRateLimitOptions } from '../../fleet/rate-limit-store.js';

const PARTY_RE = new RegExp(PARTY_PATTERN);

export function rateLimitKey(request: FastifyRequest, sessions: SessionKeys): string {
  const user = request.headers['x-user'];
  const sessionId = request.headers['x-session-id'];
  if (typeof user === 'string' && typeof sessionId === 'string' && PARTY_RE.test(user) && sessions.peek(sessionId)?.party === user) {
    return `party:${user}`;
  }
  return `ip:${request.ip}`;
}

export async function registerRateLimit(app: FastifyInstance<any, any, any, any, any>, config: Config, sessions: SessionKeys, redis: RedisHandle | null = null): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: config.rateLimitMax,
    timeWindow: config.rateLimitWindowMs,
    keyGenerator: (request) => rateLimitKey(request, sessions),
    // Without REDIS_URL the store is in process memory (the limit is per replica); with it, one
    // Redis counter per key for the whole fleet, failing open (src/fleet/rate-limit-store.ts).
    ...(redis ? redisRateLimitOptions(redis) : {}),
    errorResponseBuilder: (_request, context) =>
      new ApiError('rate_limited', `rate limit of ${context.max} requests per ${config.rateLimitWindowMs} ms exceeded; retry in ${context.after}`, {
        retryAfterS: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });
}
