// Strict integer parameters for every route. Ajv's type coercion is loose: it turns "1e400" and
// "Infinity" into Infinity (which then passes a `maximum` of 2^53-1), "\t" and "" -like blanks into
// 0, and "0x10" into 16. A cursor or a limit must be plain decimal digits, so this preValidation
// hook checks every integer query/path parameter of a route against its schema's bounds on the raw
// string, before Ajv sees it, and answers 400 naming the parameter. Leading zeros are refused too.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

interface IntegerSchema {
  type?: unknown;
  minimum?: number;
  maximum?: number;
}

// Canonical decimal only: `01` is not 1 (a cache key, a cursor or a log line would tell two names of one thing apart).
const DIGITS = /^(?:0|[1-9]\d{0,15})$/;

function checkValue(where: string, name: string, raw: unknown, schema: IntegerSchema): void {
  if (raw === undefined) return;
  if (typeof raw !== 'string') throw new ApiError('bad_request', `${where} "${name}" must be given once`);
  const min = schema.minimum ?? 0;
  const max = schema.maximum ?? Number.MAX_SAFE_INTEGER;
  const n = Number(raw);
  if (!DIGITS.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new ApiError('bad_request', `${where} "${name}" must be an integer from ${min} to ${max}, got "${raw.slice(0, 40)}"`);
  }
}

function integerProps(schema: unknown): Array<[string, IntegerSchema]> {
  const props = (schema as { properties?: Record<string, IntegerSchema> } | undefined)?.properties;
  if (!props) return [];
  return Object.entries(props).filter(([, s]) => s.type === 'integer');
}

/**
 * Adds the check to every route registered after this call that has integer parameters. Which
 * parameters those are is worked out once, when the route is registered; routes without any get
 * no hook at all, so the per-request cost is only paid where there is something to check.
 */
export function strictIntegers(app: FastifyInstance<any, any, any, any, any>): void {
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { querystring?: unknown; params?: unknown } | undefined;
    const queryInts = integerProps(schema?.querystring);
    const paramInts = integerProps(schema?.params);
    if (queryInts.length === 0 && paramInts.length === 0) return;
    const check = (request: FastifyRequest, _reply: unknown, done: (err?: Error) => void): void => {
      try {
        const query = request.query as Record<string, unknown>;
        for (const [name, s] of queryInts) checkValue('query parameter', name, query[name], s);
        const params = request.params as Record<string, unknown>;
        for (const [name, s] of paramInts) checkValue('path parameter', name, params[name], s);
        done();
      } catch (err) {
        done(err as Error);
      }
    };
    const existing = route.preValidation ? (Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation]) : [];
    route.preValidation = [check, ...existing];
  });
}
