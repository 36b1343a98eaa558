// One order per client order id and party (docs/trading.md "Client order ids"). A place whose body
// carries a `clientOrderId` the party already used is refused before it reaches the engine: 409
// `duplicate_client_order_id`, with the first order's status, so a trader who retries after a
// timeout cannot place the order twice and learns what became of the first.
//
// Known means either of:
//   - the order the live path's user channels told about (stream/client-orders.ts: every replica
//     follows the same events, so every replica knows it once the engine's event arrived);
//   - a claim (`SET NX` in Redis for a fleet, process memory otherwise) taken when the place is
//     forwarded, for the moment before the engine's events arrive: two replicas receiving the same
//     id at once cannot both forward it. A claim is released when the engine refused the order
//     (ok:false, or an HTTP refusal: the id was never used) and kept when the outcome is unknown
//     (502, 504: the order may exist); it lapses after CLAIM_TTL_MS, by when the events tell.
// A rejected order does not hold its id: the engine never had it, so the trader may use it again.
// The check needs the party, so it applies to places the gateway could verify (every valid one
// whose session it knows); an unverifiable one goes to the engine as before.
import type { Claims } from '../../contracts/claims.js';
import { parseJson } from '../../engine/client.js';
import type { ClientOrderState } from '../../stream/client-orders.js';
import { fromDomainError, ApiError } from '../errors.js';
import type { Admit, Admitted } from './forward.js';
import type { PassedAnswer } from './relay.js';

/** How long a claim holds an id without the engine's events (10 min). */
export const CLAIM_TTL_MS = 600_000;

export interface ClientOrderLookup {
  clientOrder(party: string, clientOrderId: string): ClientOrderState | null;
}

/** The clientOrderId of a JSON order body, when it has a string one (cheap when it has none). */
function clientOrderIdOf(body: Buffer | undefined): string | null {
  if (!body || body.indexOf('clientOrderId') < 0) return null;
  try {
    const value = JSON.parse(body.toString('utf8')) as { clientOrderId?: unknown };
    return typeof value.clientOrderId === 'string' && value.clientOrderId.length > 0 ? value.clientOrderId : null;
  } catch {
    return null;
  }
}

export function duplicateRefusal(clientOrderId: string, order: ClientOrderState | null): ApiError {
  return new ApiError('duplicate_client_order_id', `clientOrderId ${JSON.stringify(clientOrderId)} was already used by this party: the order below`, {
    order: order ?? { clientOrderId, status: 'pending', orderId: null },
  });
}

/** Did the engine refuse the order for sure (so the id was never used)? */
function refusedForSure(answer: PassedAnswer | null, error: unknown): boolean {
  if (answer) {
    if (answer.status < 200 || answer.status >= 300) return true;
    const json = parseJson(answer.body) as { ok?: unknown } | undefined;
    return typeof json === 'object' && json !== null && json.ok === false;
  }
  const known = fromDomainError(error);
  return known !== null && known.status >= 400 && known.status < 500;
}

/** Throws the 409 when the live path already knows an order of the party with the body's client order id. */
function refuseKnownDuplicate(lookup: ClientOrderLookup | null, party: string | null, body: Buffer | undefined): void {
  if (party === null || lookup === null) return;
  const clientOrderId = clientOrderIdOf(body);
  if (clientOrderId === null) return;
  const known = lookup.clientOrder(party, clientOrderId);
  if (known && known.status !== 'rejected') throw duplicateRefusal(clientOrderId, known);
}

export function clientOrderAdmission(lookup: ClientOrderLookup | null, claims: Claims): Admit {
  // Nothing to claim answers null at once (no promise): the call goes on without a microtask.
  return (party, call) => {
    if (party === null) return null;
    const clientOrderId = clientOrderIdOf(call.body);
    if (clientOrderId === null) return null;
    return claimed(lookup, claims, party, clientOrderId, call.body);
  };
}

/** A place with a client order id: refused when known, else claimed while it is in flight. */
async function claimed(lookup: ClientOrderLookup | null, claims: Claims, party: string, clientOrderId: string, body: Buffer | undefined): Promise<Admitted> {
  refuseKnownDuplicate(lookup, party, body);
  const claimKey = `coid:${party}\n${clientOrderId}`;
  if (!(await claims.claim(claimKey, CLAIM_TTL_MS))) throw duplicateRefusal(clientOrderId, lookup?.clientOrder(party, clientOrderId) ?? null);
  return {
    settle(answer, error) {
      if (refusedForSure(answer, error)) void claims.release(claimKey);
    },
    // Never sent (a cancel-replace whose cancel failed): the id was not used.
    release: () => claims.release(claimKey),
  };
}
