// Testnet faucet `POST /v1/users/:party/faucet` (docs/trading.md "Faucet"), and `GET` of the same
// path: the cooldown left, so a screen can disable its button instead of collecting 429s. Guarded like every
// party route (registered in the party scope, http/party-scope.ts: authenticate + own-party), so only
// the party itself can top itself up. Order of checks: enabled (404) → guards (401/403) →
// cooldown (429 + Retry-After + retryAfterS) → ceiling (403) → engine admin faucet.
//
// The cooldown comes from the mirror (faucet-policy.ts) and, for the few seconds the mirror lags a
// grant this replica just made, from a small in-process record of its own grants. Concurrent
// requests of one party are serialised in this process so they cannot both pass the check.
// With REDIS_URL, a fleet-wide cooldown key is claimed before the engine is asked
// (src/fleet/faucet-lock.ts): one grant for simultaneous requests to different replicas.
import { Type, type Static } from 'typebox';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { parseJson } from '../engine/client.js';
import { ApiError } from './errors.js';
import { errors, PartyParams } from './schemas.js';
import { faucetFacts } from './trading/faucet-policy.js';
import { isDecimal, normalizeDecimal, parseDecimal } from '../decimal.js';
import { FaucetAnswer, FaucetStatus, Rejection } from './trading/schemas.js';

type Answer = Static<typeof FaucetAnswer> | Static<typeof Rejection>;

export const faucetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config, clock, db, engine, fleet } = app;
  const cooldownMs = config.faucetCooldownS * 1000;
  const ceiling = parseDecimal(config.faucetCeiling);
  const amount = normalizeDecimal(config.faucetAmount);
  /** party → Unix ms of a grant made by this process (covers the mirror's lag). */
  const granted = new Map<string, number>();
  /** party → the request of that party in progress in this process. */
  const inProgress = new Map<string, Promise<Answer>>();

  const refuseWhenDisabled = async () => {
    if (!config.faucetEnabled) throw new ApiError('not_found', 'the faucet is not enabled on this gateway (FAUCET_ENABLED)');
  };

  /** Unix ms of the party's last grant: the mirror's, or this process's own while the mirror lags it. */
  const lastGrantMs = (party: string, facts: { lastFaucetAtMs: number | null }): number => Math.max(facts.lastFaucetAtMs ?? -Infinity, granted.get(party) ?? -Infinity);

  async function grant(party: string, reply: FastifyReply): Promise<Answer> {
    const facts = await faucetFacts(db, party);
    const now = clock.now();
    const last = lastGrantMs(party, facts);
    if (cooldownMs > 0 && now - last < cooldownMs) {
      const retryAfterS = Math.max(1, Math.ceil((last + cooldownMs - now) / 1000));
      void reply.header('retry-after', String(retryAfterS));
      throw new ApiError('rate_limited', `faucet cooldown: one top-up per ${config.faucetCooldownS} s; retry in ${retryAfterS} s`, { retryAfterS });
    }
    const balance = isDecimal(facts.balance) ? parseDecimal(facts.balance) : null;
    if (balance !== null && balance >= ceiling) {
      throw new ApiError('forbidden', `balance ${normalizeDecimal(facts.balance)} is at or above the faucet ceiling ${normalizeDecimal(config.faucetCeiling)}`, {
        balance: normalizeDecimal(facts.balance),
        ceiling: normalizeDecimal(config.faucetCeiling),
      });
    }
    if (!config.engineAdminToken) {
      throw new ApiError('engine_unavailable', 'the faucet needs ENGINE_ADMIN_TOKEN to call the engine admin faucet');
    }
    const claim = cooldownMs > 0 && fleet ? await fleet.faucetLock.claim(party, cooldownMs) : null;
    if (claim && !claim.granted) {
      const retryAfterS = Math.max(1, Math.ceil(claim.retryAfterMs / 1000));
      void reply.header('retry-after', String(retryAfterS));
      throw new ApiError('rate_limited', `faucet cooldown: one top-up per ${config.faucetCooldownS} s; retry in ${retryAfterS} s`, { retryAfterS });
    }
    let answer: Answer;
    try {
      answer = await topUp(party);
    } catch (err) {
      if (claim?.granted) await claim.release();
      throw err;
    }
    if ('ok' in answer && claim?.granted) await claim.release(); // an engine refusal is not a grant
    if (!('ok' in answer)) {
      granted.set(party, clock.now());
      if (granted.size > 100_000) for (const [p, at] of granted) if (clock.now() - at >= cooldownMs) granted.delete(p);
    }
    return answer;
  }

  async function topUp(party: string): Promise<Answer> {
    const res = await engine.request({
      method: 'POST',
      path: '/v1/admin/faucet',
      headers: { ...engine.adminHeaders(), 'content-type': 'application/json' },
      body: JSON.stringify({ party, amount }),
    });
    const answer = parseJson(res.body) as { ok?: unknown; newBalance?: unknown; code?: unknown; error?: unknown } | undefined;
    // Any non-2xx from the admin API is the gateway's problem (token, engine), never the client's.
    if (res.status !== 200 || answer === undefined) {
      throw new ApiError('engine_unavailable', `the engine faucet answered HTTP ${res.status}`, { engineStatus: res.status });
    }
    if (answer.ok === false && typeof answer.code === 'string' && typeof answer.error === 'string') {
      return { ok: false, code: answer.code, error: answer.error };
    }
    if (answer.ok !== true || typeof answer.newBalance !== 'string' || !isDecimal(answer.newBalance)) {
      throw new ApiError('engine_unavailable', 'the engine faucet answered an unexpected body', { engineStatus: res.status });
    }
    return { party, amount, newBalance: normalizeDecimal(answer.newBalance) };
  }

  app.get('/v1/users/:party/faucet', {
    onRequest: refuseWhenDisabled,
    schema: {
      tags: ['mirror'],
      summary: 'Testnet faucet: the cooldown left (FAUCET_ENABLED only)',
      operationId: 'faucetStatus',
      description:
        "What a top-up would give and when it is allowed: `retryAfterS` 0 and `nextAt` null when now, else the seconds and the time the party's cooldown ends (its last faucet deposit + FAUCET_COOLDOWN_S). The same facts the POST checks; a fleet's Redis claim is not read, so a grant on another replica shows once the mirror has it (seconds). 404 when the faucet is disabled.",
      params: PartyParams,
      response: { 200: FaucetStatus, ...errors(400, 401, 403, 404, 503, 504) },
    },
    handler: async (request) => {
      const { party } = request.params;
      const last = lastGrantMs(party, await faucetFacts(db, party));
      const endsAt = last + cooldownMs;
      const left = cooldownMs > 0 && clock.now() < endsAt ? endsAt - clock.now() : 0;
      return { party, amount, cooldownS: config.faucetCooldownS, retryAfterS: Math.ceil(left / 1000), nextAt: left > 0 ? new Date(endsAt).toISOString() : null };
    },
  });

  app.post('/v1/users/:party/faucet', {
    onRequest: refuseWhenDisabled,
    schema: {
      tags: ['mirror'],
      summary: 'Testnet top-up (FAUCET_ENABLED only)',
      operationId: 'faucet',
      description: `Credits FAUCET_AMOUNT through the engine admin faucet. 429 (with \`retryAfterS\` and Retry-After) within FAUCET_COOLDOWN_S of the party's previous faucet deposit; 403 when the party's balance is at or above FAUCET_CEILING; 404 when the faucet is disabled. No body.`,
      params: PartyParams,
      response: {
        200: Type.Union([FaucetAnswer, Rejection], { description: 'The top-up, or an engine `ok:false` rejection' }),
        ...errors(400, 401, 403, 404, 413, 415, 429, 502, 503, 504),
      },
    },
    handler: async (request, reply) => {
      const { party } = request.params;
      const previous: Promise<unknown> = inProgress.get(party) ?? Promise.resolve();
      const mine = previous.catch(() => undefined).then(() => grant(party, reply));
      inProgress.set(party, mine);
      try {
        return await mine;
      } finally {
        if (inProgress.get(party) === mine) inProgress.delete(party);
      }
    },
  });
};
