// Cancel-replace (docs/trading.md "Cancel-replace"): a signed cancel and a signed place in one
// call. The place is sent only once the engine has confirmed the cancel (`ok:true`), so the old and
// the new order are never live together; a place the gateway itself would refuse, or knows the
// engine would (its signature), is refused before the cancel is sent (both outcomes in the answer,
// the cancel `skipped`), and its client order id,
// if any, is claimed then, as a single place's is when it is forwarded. When the cancel is not
// confirmed (the order was already filled or cancelled: the engine's `order_not_open` /
// `unknown_order`; a refusal; a timeout, after which the old order's fate is unknown) the place is
// not sent: its outcome is `skipped`, and the id it claimed is free again.
import { chargeDesk, prepareItem, refused, sendItem, skipped, succeeded, type DeskContext, type DeskParts, type PreparedItem } from './batch.js';
import type { ItemOutcome, ReplaceBody } from '../../contracts/desk.js';
import type { Admitted } from './forward.js';
import { ApiError, fromDomainError } from '../errors.js';

export interface ReplaceResult {
  cancel: ItemOutcome;
  place: ItemOutcome;
  replaced: boolean;
}

/** Weight of a cancel-replace in both budgets: one request (docs/trading.md "Batch weights"). */
export const REPLACE_WEIGHT = 1;

export async function runReplace(parts: DeskParts, ctx: DeskContext, request: ReplaceBody): Promise<ReplaceResult> {
  let cancel = prepareItem({ op: 'cancel', ...request.cancel }, request.user, request.sessionId, `${ctx.requestId}.cancel`, ctx.ip);
  let place = prepareItem({ op: 'place', ...request.place }, request.user, request.sessionId, `${ctx.requestId}.place`, ctx.ip);
  // Both signatures are verified and spent before either is sent, as a batch's; a part the engine
  // would refuse for sure (a signature spent, garbage, outside the window, of another session or
  // party) is refused here, so its other part is not sent either: a place known to be refused never
  // costs the resting order.
  const prepared = [cancel, place];
  await (await chargeDesk(parts, ctx, prepared, REPLACE_WEIGHT, { when: 'certain' })).rest();
  [cancel, place] = prepared as [PreparedItem, PreparedItem];
  // A place the gateway itself refuses (not JSON, not the order's shape, a client order id the
  // party used or has in flight, here or on another replica) would be refused after the cancel went
  // through, leaving the trader with neither order: it is judged, and its id claimed, first.
  if ('refusal' in place) return { cancel: skipped('cancel'), place: refused('place', place.refusal), replaced: false };
  let admitted: Admitted | null;
  try {
    admitted = await parts.admitPlace(place.call);
  } catch (err) {
    return { cancel: skipped('cancel'), place: refused('place', fromDomainError(err) ?? new ApiError('internal_error', 'the place could not be judged')), replaced: false };
  }
  place.call.admitted = admitted;
  const cancelled = await sendItem(parts, cancel);
  if (!succeeded(cancelled)) {
    // Freed before the answer, so a client that reads it and places the id at once is not refused.
    await admitted?.release().catch((err: unknown) => parts.log(err));
    return { cancel: cancelled, place: skipped('place'), replaced: false };
  }
  const placed = await sendItem(parts, place);
  return { cancel: cancelled, place: placed, replaced: succeeded(placed) };
}
