// A place whose answer never came may have reached the engine: a network error after the request
// left, a 502 or 504 (nginx's replica_unavailable when the replica died with it, the gateway's
// engine_unavailable / engine_timeout), or a 503 without a gateway code (an edge proxy's page). An
// order placed with a clientOrderId can be asked for, so placeOrder asks before it answers: the
// caller gets the order's real outcome instead of an error that hides it (docs/trading.md
// "Unknown outcome").
import { GatewayError } from './errors.js';
import type { Transport } from './transport.js';
import type { Answer, OrderAccepted, PlacedOrderStatus } from './types.js';

/** An error after which the order may or may not exist. */
export function outcomeUnknown(err: unknown): err is GatewayError {
  if (!(err instanceof GatewayError)) return false;
  if (err.status === 0 || err.status === 502 || err.status === 504) return true;
  return err.status === 503 && (err.code === undefined || err.code === 'http_error');
}

interface FoundOrder {
  order: { orderId: string | null; status: PlacedOrderStatus | 'rejected' | 'pending'; filledSize?: string; avgPrice?: string | null; code?: string | null; reason?: string | null };
  /** With `pending`: when the gateway settles the id at the latest (docs/trading.md "Client order ids"). */
  settlesBy?: string;
}

export interface UnknownOutcomeOptions {
  party: string;
  clientOrderId: string;
  /** How long to keep asking while the gateway knows no such order (its events may lag the engine's answer). */
  waitMs: number;
  pollMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The order's outcome by its clientOrderId: accepted (as placeOrder answers it) or rejected (as a
 * value). When no gateway knows the order within `waitMs`, or it cannot be asked, `failed` is
 * thrown again, its code `order_outcome_unknown` (the first error's code in `firstCode`).
 */
export async function settleByClientOrderId(transport: Transport, failed: GatewayError, o: UnknownOutcomeOptions): Promise<Answer<OrderAccepted>> {
  const path = `/v1/users/${encodeURIComponent(o.party)}/orders/by-client-id/${encodeURIComponent(o.clientOrderId)}`;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = Date.now() + o.waitMs;
  let lookup = 'not found';
  let settlesBy: string | undefined;
  for (;;) {
    try {
      const { order, settlesBy: by } = await transport.call<FoundOrder>({ method: 'GET', path, signed: true });
      if (order.status === 'rejected') return { ok: false, code: order.code ?? 'rejected', error: order.reason ?? 'the engine rejected the order' };
      // Pending: a gateway sent it and does not know its outcome yet; it settles by `settlesBy`
      // (the order, or not found: never placed, the id free again). Not an answer: keep asking.
      if (order.status === 'pending') {
        settlesBy = by;
        lookup = `is pending at the gateway (sent, its outcome not known yet; settled by ${by ?? 'the signature window\'s end'})`;
      } else if (order.orderId) {
        return { ok: true, orderId: order.orderId, status: order.status, filledSize: order.filledSize ?? '0', avgPrice: order.avgPrice ?? null };
      } else {
        lookup = 'known but not yet given an order id';
      }
    } catch (err) {
      if (!(err instanceof GatewayError) || err.status !== 404) {
        lookup = `could not be asked (${err instanceof Error ? err.message : String(err)})`;
        break;
      }
    }
    if (Date.now() >= deadline) break;
    await sleep(o.pollMs ?? 250);
  }
  throw new GatewayError(failed.status, failed.path, {
    ...failed.body,
    error: `${failed.body.error}; the order's outcome is unknown: clientOrderId "${o.clientOrderId}" ${lookup}. Ask again (orderByClientId), or place it again with the same clientOrderId: the gateway refuses a second order with that id (409 duplicate_client_order_id)`,
    code: 'order_outcome_unknown',
    firstCode: failed.body.code,
    ...(settlesBy ? { settlesBy } : {}),
  });
}
