// Rate limits of the trading and faucet routes (docs/security.md "Rate limits"). Two budgets per
// RATE_LIMIT_WINDOW_MS, both kept by @fastify/rate-limit:
//
// - per client IP (`request.ip`, IPv6 by /64), RATE_LIMIT_IP_MAX: every request, signed or not, counted before
//   anything else runs. Nothing a client writes in a header selects this budget, and minting
//   sessions does not multiply it.
// - per verified party, RATE_LIMIT_MAX: only a request whose signature the gateway has verified
//   (session known, inside the ±30 s window, ed25519 over the request, first use) spends its
//   party's budget, so nobody can spend or exhaust another party's budget by copying its public
//   `X-User` and `X-Session-Id`. A signed request the gateway cannot verify (unknown session, bad
//   signature) is counted under its IP only, and the engine judges it as always; a replayed one is refused (401).
//
// The limiter options are built in one place (`rateLimitOptions`) so a shared store (a Redis client)
// can be passed in and every replica then counts together; by default each process counts alone.
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../../config/env.js';
import { ApiError } from '../errors.js';

/** A shared counter store for the limiter: @fastify/rate-limit's store options (src/fleet/rate-limit-store.ts). */
export type RateLimitStore = Pick<RateLimitPluginOptions, 'store' | 'skipOnError'>;

function limitedError(max: number, windowMs: number, ttlMs: number, what: string): ApiError {
  const retryAfterS = Math.max(1, Math.ceil(ttlMs / 1000));
  return new ApiError('rate_limited', `rate limit of ${max} requests per ${windowMs} ms ${what} exceeded; retry in ${retryAfterS} s`, { retryAfterS });
}

/** The options of the limiter plugin: the per-IP budget as its global rule. */
export function rateLimitOptions(config: Config, store: RateLimitStore = {}): RateLimitPluginOptions {
  return {
    global: true,
    hook: 'onRequest',
    max: config.rateLimitIpMax,
    timeWindow: config.rateLimitWindowMs,
    // No keyGenerator: the plugin's default keys on `request.ip`, with IPv6 addresses grouped by
    // their /64 (one host usually holds a whole /64, so rotating inside it gains nothing).
    ipv6Subnet: 64,
    // The plugin sets Retry-After and the RateLimit-Limit / -Remaining / -Reset headers (the IETF
    // draft's names) on every answer of the trading scope, refusals included.
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) => limitedError(context.max, config.rateLimitWindowMs, context.ttl, 'per client address'),
    // Without REDIS_URL the store is in process memory (the limit is per replica); with it, one
    // Redis counter per key for the whole fleet, failing open.
    ...store,
  };
}

/** What one charge of a budget left: requests remaining in the window, and seconds until it resets. */
export interface BudgetLeft {
  remaining: number;
  resetS: number;
}

/** Charges verified parties: throws 429 `rate_limited` (with retryAfterS → Retry-After) past RATE_LIMIT_MAX. */
export type PartyBudget = (party: string) => Promise<void>;

/**
 * The two budgets, for callers that are not a route of the trading scope (the socket's signed
 * calls, src/http/stream-messages.ts): the same counters, keys and limits as the routes'.
 */
export interface TradingBudgets {
  /** Spends one request of the client address's budget (the routes' global onRequest rule does this for REST); what is left. */
  address(ip: string): Promise<BudgetLeft>;
  party: PartyBudget;
}

/**
 * What the limiter reads of a "request" when asked directly (createRateLimit): the key's source
 * and the route options it looks a group id up in. A plain object, so a socket message can be
 * charged without a Fastify request.
 */
interface LimiterSubject {
  ip?: string;
  budgetParty?: string;
  routeOptions: { config: Record<string, unknown> };
}

export async function registerRateLimit(
  app: FastifyInstance<any, any, any, any, any>,
  config: Config,
  store: RateLimitStore = {},
): Promise<TradingBudgets> {
  await app.register(rateLimit, rateLimitOptions(config, store));
  const partyLimit = app.createRateLimit({
    max: config.rateLimitMax,
    keyGenerator: (request: FastifyRequest) => `party:${(request as unknown as LimiterSubject).budgetParty ?? ''}`,
  });
  // No options: the plugin's global rule itself (its store, its key: the address, IPv6 by /64).
  const addressLimit = app.createRateLimit();
  const asRequest = (subject: LimiterSubject): FastifyRequest => subject as unknown as FastifyRequest;
  return {
    async party(party) {
      const limit = await partyLimit(asRequest({ budgetParty: party, routeOptions: { config: {} } }));
      if (!limit.isAllowed && limit.isExceeded) throw limitedError(config.rateLimitMax, config.rateLimitWindowMs, limit.ttl, 'per party');
    },
    async address(ip) {
      const limit = await addressLimit(asRequest({ ip, routeOptions: { config: {} } }));
      if (!limit.isAllowed && limit.isExceeded) throw limitedError(config.rateLimitIpMax, config.rateLimitWindowMs, limit.ttl, 'per client address');
      // isAllowed: an allow-listed key, never counted.
      if (limit.isAllowed) return { remaining: config.rateLimitIpMax, resetS: 0 };
      return { remaining: limit.remaining, resetS: Math.max(0, Math.ceil(limit.ttl / 1000)) };
    },
  };
}

/** The party routes of the trading scope (the faucet) spend the budget of the party the guards proved. */
export function chargeProvenParty(charge: PartyBudget) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.provenParty) await charge(request.provenParty);
  };
}
