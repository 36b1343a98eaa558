// Batches of signed calls (docs/trading.md "Batches"): up to 50 signed place / cancel calls of one
// party and session in one REST call or one socket message. Each item is the very call it would be
// alone: signed over the same bytes (the engine verifies them), judged by the same verified-forward
// (`routeCall`), its signature spent in the same replay memory. What the batch adds:
//
//   - one charge of the rate-limit budgets, by the weight table below, made before any item is
//     sent (a batch over the budget sends nothing);
//   - concurrency: every item at once (default), or one after the other (`ordered`), optionally
//     stopping at the first failure (`stopOnFailure`: the rest are `skipped`, never sent);
//   - an answer listing every item's outcome in order: an item that fails, in the gateway or the
//     engine, is an outcome like any other and never hides the others'.
import { parseJson } from '../../engine/client.js';
import { EngineShareExhaustedError } from '../../engine/errors.js';
import { spentRefusal, type RefuseWhen, type SignedHeaders } from '../../auth/signed-request.js';
import { AuthError } from '../../auth/errors.js';
import { ApiError, fromDomainError } from '../errors.js';
import type { Admitted, CallInput, RouteCall } from './forward.js';
import type { PassedAnswer } from './relay.js';
import type { BudgetLeft, TradingBudgets } from './rate-limit.js';
import { orderIdPath } from './targets.js';
import type { BatchItem, ItemOutcome } from '../../contracts/desk.js';

/**
 * The weight of a batch of n items, in requests of the budgets (RATE_LIMIT_IP_MAX, RATE_LIMIT_MAX):
 * one per started ten items (1–10 → 1, 11–20 → 2, … 41–50 → 5). A full batch costs a tenth of its
 * calls sent alone, which is what makes it worth using; a cancel-replace weighs 1.
 */
export function batchWeight(items: number): number {
  return Math.max(1, Math.ceil(items / 10));
}

/** What the desk calls need of the trading routes: the item calls and the budgets. */
export interface DeskParts {
  /** POST /v1/orders and DELETE /v1/orders/:orderId, their party budget charged by the caller (`precharged`). */
  place: RouteCall;
  cancel: RouteCall;
  /**
   * The gateway's own check of a signature (spends it in the replay memory): the party, or null when
   * it cannot tell. Throws the AuthError of a refusal the gateway makes itself (`when`,
   * auth/signed-request.ts gatewayRefusal: a spent signature always; with 'certain', any the engine
   * would make too).
   */
  verify: (signature: SignedHeaders, method: string, target: string, body: Buffer, offThread: boolean, when?: RefuseWhen) => Promise<string | null>;
  /** Which signatures the replay memory holds as spent (auth/signed-request.ts spentSignatures): one exchange for all. */
  spent: (signatures: readonly SignedHeaders[]) => Promise<boolean[]>;
  /**
   * Readies the spending of signatures the engine may accept (their replay memory entries made
   * now); the function returned spends, without checking them here, those it accepted (answered
   * 2xx): the engine verified the same bytes with the same session key (signed-request.ts
   * spendEngineVerifiedMany). All of a batch's in one exchange with the replay memory.
   */
  readySpend: (signatures: readonly SignedHeaders[]) => (accepted: readonly boolean[]) => Promise<unknown>;
  budgets: TradingBudgets;
  /**
   * The gateway's own checks of a place, made before it is sent (its body's shape; its client
   * order id, neither known nor claimed by the party, then claimed for it): throws the refusal, else
   * the admission to pass as the call's `admitted`. A cancel-replace takes it before sending its
   * cancel, so a place bound to be refused never costs the trader its resting order, and two
   * replicas cannot both place the id.
   */
  admitPlace: (call: CallInput) => Promise<Admitted | null>;
  log: (err: unknown) => void;
  /**
   * Engine calls the client address may still hand the engine's fair share now (fair-share.ts
   * `room`): a batch with more items than that is refused whole, 429 `budget_exhausted`
   * (`engine_calls`), before its budget is charged or any signature checked. Absent: no check.
   */
  engineRoom?: (ip: string) => number;
}

/** How the desk call arrived: REST has already spent one request of the address budget (its onRequest rule). */
export interface DeskContext {
  ip: string;
  requestId: string;
  /** Requests of the address budget already spent for this call (1 for REST, 0 for the socket). */
  addressCharged: number;
  /** Set by the charge when it spent more of the address budget than `addressCharged`: what is left (for REST's RateLimit-* headers). */
  addressLeft?: BudgetLeft;
}

/** An item read into the call it stands for (a refusal of the item alone when it cannot be). */
export type PreparedItem = { op: BatchItem['op']; call: CallInput } | { op: BatchItem['op']; refusal: ApiError };

export function prepareItem(item: BatchItem, user: string, sessionId: string, requestId: string, address?: string): PreparedItem {
  const signature: SignedHeaders = { user, sessionId, sig: item.sig };
  try {
    if (item.op === 'place') {
      // As REST judges a body: JSON (the app's parser), else 400.
      const body = Buffer.from(item.body, 'utf8');
      if (parseJson(body) === undefined) throw new ApiError('bad_request', 'item body is not valid JSON');
      return { op: item.op, call: { method: 'POST', target: '/v1/orders', body, signature, requestId, address, precharged: true } };
    }
    return { op: item.op, call: { method: 'DELETE', target: orderIdPath(item.orderId), body: undefined, signature, requestId, address, precharged: true } };
  } catch (err) {
    return { op: item.op, refusal: fromDomainError(err) ?? new ApiError('internal_error', 'the item could not be read') };
  }
}

/** What is left to do for the items after the one that proved the party (see chargeDesk). */
export interface DeskRest {
  /** Checks all of them now (verify and spend, on the thread pool): before any is sent. */
  rest: () => Promise<void>;
  /**
   * Readies their settling (called once they are sent, while the engine works on them); the
   * function returned settles them once every outcome is known (`outcomes[i]` is item `first + i`'s):
   * the items the engine accepted (2xx) are spent together as the engine verified them; any other
   * (refused by the engine or the gateway, not sent) is checked and spent by the gateway itself, as
   * `rest` would have. Never throws (the batch answer stands).
   */
  readySettle: () => (outcomes: ItemOutcome[]) => Promise<void>;
  /** Index of the first item `rest` / `settle` are for (those before it were checked by the charge). */
  first: number;
}

export interface ChargeOptions {
  /** Which refusals the gateway makes itself (default 'spent'; a cancel-replace: 'certain'). */
  when?: RefuseWhen;
  /**
   * A concurrent batch, whose items after the one proving the party are sent without the
   * gateway's check: the replay memory is asked which of them it holds as spent (at the same time
   * as the first check, so it costs no extra wait), and those are refused, not sent.
   */
  checkSpent?: boolean;
}

/**
 * Charges both budgets the weight once, for the party the items' signatures prove, and spends
 * every item's signature in the replay memory, as a single call's is spent. Throws 429 before
 * anything is sent. Items are verified in order until one proves the party (they share one user
 * and session, so one proves it for all; when none can be verified nobody's party budget is spent
 * and the engine judges each item, as it judges an unverifiable single call). The others are
 * left to the caller (`DeskRest`): their checks only fill the replay memory, and the engine's own
 * verification decides their fate either way, so they need not hold up the engine. A concurrent
 * batch settles them once all answers are in: a full batch's 49 other ed25519 checks, which cost as
 * much CPU as the engine's own checks and competed with them for the machine's cores, are then
 * made only for the items the engine did not accept (docs/adr/0160-batch-signatures-spent-on-engine-proof.md),
 * and the accepted ones are spent in one exchange with the replay memory (docs/adr/0171).
 *
 * An item whose signature the gateway refuses itself (spent already: the engine may never have
 * seen it; see ChargeOptions.when) becomes a refusal in `prepared`: it is never sent.
 */
export async function chargeDesk(parts: DeskParts, ctx: DeskContext, prepared: PreparedItem[], weight: number, options: ChargeOptions = {}): Promise<DeskRest> {
  const when = options.when ?? 'spent';
  // The weight's units are charged at once, not one after the other: with the fleet's Redis store
  // each is a round trip, and a full batch's 4 + 5 in a row held every item back.
  const lefts = await Promise.all(Array.from({ length: Math.max(0, weight - ctx.addressCharged) }, () => parts.budgets.address(ctx.ip)));
  if (lefts.length > 0) ctx.addressLeft = lefts.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  const spentCheck = options.checkSpent ? askSpent(parts, prepared.slice(1)) : null;
  // A refusal the gateway makes itself becomes the item's outcome; any other failure is thrown.
  const check = async (i: number, offThread: boolean): Promise<string | null> => {
    const p = prepared[i]!;
    if (!('call' in p)) return null;
    try {
      return await parts.verify(p.call.signature!, p.call.method, p.call.target, p.call.body ?? Buffer.alloc(0), offThread, when);
    } catch (err) {
      if (!(err instanceof AuthError)) throw err;
      prepared[i] = { op: p.op, refusal: fromDomainError(err)! };
      return null;
    }
  };
  let party: string | null = null;
  let next = 0;
  while (party === null && next < prepared.length) party = await check(next++, false);
  const proven = party;
  if (proven) await Promise.all(Array.from({ length: weight }, () => parts.budgets.party(proven)));
  for (const p of prepared) if ('call' in p) p.call.party = party;
  if (spentCheck) {
    const spent = await spentCheck;
    for (let i = next; i < prepared.length; i++) {
      const p = prepared[i]!;
      if (spent[i - 1] && 'call' in p) prepared[i] = { op: p.op, refusal: fromDomainError(spentRefusal())! };
    }
  }
  const first = next;
  const indices = (): number[] => prepared.map((_, i) => i).filter((i) => i >= first && 'call' in prepared[i]!);
  return {
    first,
    rest: async () => {
      // As before, a store that cannot answer leaves the engine's own replay check to hold.
      await Promise.all(indices().map((i) => check(i, true).catch(() => null)));
    },
    readySettle: () => {
      const at = indices();
      const calls = at.map((i) => (prepared[i] as { call: CallInput }).call);
      const spend = parts.readySpend(calls.map((c) => c.signature!));
      const verifyAfter = (c: CallInput) => parts.verify(c.signature!, c.method, c.target, c.body ?? Buffer.alloc(0), true).catch(() => null);
      return async (outcomes) => {
        const others: Promise<unknown>[] = [];
        at.forEach((i, j) => {
          if (outcomes[i - first]!.outcome !== 'answered') others.push(verifyAfter(calls[j]!));
        });
        const accepted = at.map((i) => outcomes[i - first]!.outcome === 'answered');
        // As `rest`: a memory that cannot take them leaves the engine's own replay check to hold.
        await Promise.all([spend(accepted).catch(() => null), ...others]);
      };
    },
  };
}

/** Which of these items' signatures are spent (false for an item that is already a refusal). */
async function askSpent(parts: DeskParts, items: readonly PreparedItem[]): Promise<boolean[]> {
  const at: number[] = [];
  const signatures: SignedHeaders[] = [];
  items.forEach((p, i) => {
    if (!('call' in p)) return;
    at.push(i);
    signatures.push(p.call.signature!);
  });
  const out = items.map(() => false);
  const spent = await parts.spent(signatures);
  at.forEach((i, j) => (out[i] = spent[j]!));
  return out;
}

function parsedBody(passed: PassedAnswer): Record<string, unknown> {
  const json = parseJson(passed.body);
  if (typeof json === 'object' && json !== null && !Array.isArray(json)) return json as Record<string, unknown>;
  throw new ApiError('engine_unavailable', 'the engine answered with a body that is not a JSON object', { engineStatus: passed.status });
}

/** One prepared item sent through its route's verified-forward; its outcome, whatever happens. */
export async function sendItem(parts: DeskParts, item: PreparedItem): Promise<ItemOutcome> {
  if ('refusal' in item) return refused(item.op, item.refusal);
  try {
    const passed = await (item.op === 'place' ? parts.place : parts.cancel)(item.call);
    const body = parsedBody(passed);
    if (passed.retryAfter !== undefined) body.retryAfter ??= passed.retryAfter;
    return { op: item.op, outcome: passed.status >= 200 && passed.status < 300 ? 'answered' : 'refused', status: passed.status, body };
  } catch (err) {
    const known = fromDomainError(err);
    if (!known) parts.log(err);
    return refused(item.op, known ?? new ApiError('internal_error', 'the item could not be sent'));
  }
}

export function refused(op: BatchItem['op'], err: ApiError): ItemOutcome {
  return { op, outcome: 'refused', status: err.status, body: err.body() };
}

export const skipped = (op: BatchItem['op']): ItemOutcome => ({ op, outcome: 'skipped', status: null, body: null });

/** An item that did what it was sent for: the engine answered 2xx with ok:true. */
export function succeeded(o: ItemOutcome): boolean {
  return o.outcome === 'answered' && o.body !== null && (o.body as { ok?: unknown }).ok === true;
}

export interface BatchRequest {
  user: string;
  sessionId: string;
  mode?: 'concurrent' | 'ordered';
  stopOnFailure?: boolean;
  items: BatchItem[];
}

export interface BatchResult {
  results: ItemOutcome[];
  weight: number;
}

/** Runs a batch: charge, then the items concurrently or in order; every item's outcome, in order. */
export async function runBatch(parts: DeskParts, ctx: DeskContext, request: BatchRequest): Promise<BatchResult> {
  if (request.stopOnFailure && request.mode !== 'ordered') {
    throw new ApiError('bad_request', 'stopOnFailure needs mode "ordered" (concurrent items are all sent at once)');
  }
  // A burst past the address's share of the engine is refused at the door, whole: its items would
  // be refused one by one after the charge and the signature checks, work done for nothing.
  const room = parts.engineRoom?.(ctx.ip);
  if (room !== undefined && room < request.items.length) throw new EngineShareExhaustedError(request.items.length);
  const prepared = request.items.map((item, i) => prepareItem(item, request.user, request.sessionId, `${ctx.requestId}.${i}`, ctx.ip));
  const weight = batchWeight(prepared.length);
  const { rest, readySettle, first } = await chargeDesk(parts, ctx, prepared, weight, { checkSpent: request.mode !== 'ordered' });
  if (request.mode !== 'ordered') {
    // Every item at once; all settled in the replay memory before the answer is sent, so a client
    // that resends one after reading the answer is refused by the gateway itself. What settling
    // needs is made while the engine works (docs/adr/0188). (Handing the items over a few per turn,
    // so the first are written while the rest are prepared, cost ~1 ms more CPU a batch for no gain
    // that could be measured: ADR 0188.)
    const sending = prepared.map((p) => sendItem(parts, p));
    const settle = readySettle();
    const results = await Promise.all(sending);
    await settle(results.slice(first));
    return { results, weight };
  }
  await rest();
  const results: ItemOutcome[] = [];
  let stopped = false;
  for (const p of prepared) {
    if (stopped) {
      results.push(skipped(p.op));
      continue;
    }
    const outcome = await sendItem(parts, p);
    results.push(outcome);
    if (request.stopOnFailure && !succeeded(outcome)) stopped = true;
  }
  return { results, weight };
}
