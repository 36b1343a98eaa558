// The shape check of a trading call's body, made before anything is forwarded (REST and the
// socket's order messages alike: routeCall runs it). The engine copies what it is sent: an order's
// body, unknown fields included, becomes its `inbound.order` event, which every gateway and relay
// then reads and every client of the raw stream receives. So a body that is not an engine request
// by the contract's shape (a field the contract does not list, a number where it has a decimal
// string, a value outside an enum, a string longer than documented, a body over
// TRADING_BODY_MAX_BYTES) is refused 400 `invalid_body`, naming the field. The grammar inside the
// strings (decimal format, grids, notional, margin) stays the engine's, answered ok:false.
// A valid body is not re-encoded: the very bytes the client signed are forwarded.
import { Compile } from 'typebox/compile';
import type { TSchema } from 'typebox';
import { ApiError } from '../errors.js';

/** The largest body a trading call may carry; a real one is a few hundred bytes. */
export const TRADING_BODY_MAX_BYTES = 4096;

export type BodyCheck = (body: Buffer | undefined) => void;

/** The check of one route's body against its schema (compiled once). */
export function bodyShape(route: string, schema: TSchema): BodyCheck {
  const check = Compile(schema);
  return (body) => {
    if (body === undefined || body.length === 0) throw invalid(route, 'a JSON body is required', null);
    if (body.length > TRADING_BODY_MAX_BYTES) throw invalid(route, `the body is ${body.length} bytes, over ${TRADING_BODY_MAX_BYTES}`, null);
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      throw invalid(route, 'the body is not valid JSON', null);
    }
    if (check.Check(value)) return;
    const first = check.Errors(value)[0];
    const field = first ? fieldOf(first) : null;
    throw invalid(route, first ? `${field ?? 'body'}: ${describe(first)}` : 'the body does not match', field);
  };
}

interface TypeBoxError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  message?: string;
  params?: object;
}

/** The dotted path of the field an error is about (an unknown field: its own path). */
function fieldOf(e: TypeBoxError): string | null {
  const path = e.instancePath.split('/').filter((p) => p.length > 0);
  const missing = e.keyword === 'required' ? (e.params as { requiredProperties?: string[] } | undefined)?.requiredProperties?.[0] : undefined;
  if (missing !== undefined) path.push(missing);
  return path.length > 0 ? path.join('.').slice(0, 120) : null;
}

function describe(e: TypeBoxError): string {
  if (e.schemaPath.endsWith('/additionalProperties')) return 'is not a field of this request (docs/trading.md)';
  if (e.keyword === 'required') return 'is required';
  return e.message ?? e.keyword;
}

function invalid(route: string, message: string, field: string | null): ApiError {
  return new ApiError('invalid_body', `${route}: ${message}`, field === null ? {} : { field });
}
