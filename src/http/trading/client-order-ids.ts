// One order per client order id and party (docs/trading.md "Client order ids", ADR 0320). A place
// whose body carries a `clientOrderId` the party already used is refused before it reaches the
// engine: 409 `duplicate_client_order_id`, with the first order's status, so a trader who retries
// after a timeout cannot place the order twice and learns what became of the first.
//
// Known means either of:
//   - the order the live path's user channels told about (stream/client-orders.ts: every replica
//     follows the same events, so every replica knows it once the engine's event arrived);
//   - a claim (`SET NX` in Redis for a fleet, process memory otherwise) taken when the place is
//     forwarded, for the moment before the engine's events arrive: two replicas receiving the same
//     id at once cannot both forward it.
// A claim lives no longer than the engine could still accept the place's signature (its timestamp
// + the engine's 30 s) plus CLIENT_ORDER_CLAIM_MARGIN_MS. It settles:
//   - the engine refused the order (ok:false, an HTTP refusal): released at once (the id was never used);
//   - the engine accepted it: the answer's order is noted on the claim, so every replica answers it
//     before the events arrive;
//   - at the bound (the signature dead at the engine), on the replica that sent it: the events are
//     the engine's complete record of its orders, so an order the live path knows → released (the
//     live record holds the id); the live path holding everything up to the engine's head and no
//     such order → released (never placed); the live path unable to tell (disabled, behind) → the
//     mirror's row or the engine's open orders by the id turn the claim into the placed order (kept
//     PLACED_NOTE_TTL_MS), else released and counted `unverified`.
// The status route reads the same three things in the same order (find), so while a claim is held
// both routes say `pending` (docs/trading.md "Client order ids").
import type { Claims, HeldClaim } from '../../contracts/claims.js';
import type { Clock, ClockTimer } from '../../contracts/clock.js';
import { parseJson } from '../../engine/client.js';
import type { ClientOrderState } from '../../stream/client-orders.js';
import { fromDomainError, ApiError } from '../errors.js';
import type { Admit, Admitted, CallInput } from './forward.js';
import type { PassedAnswer } from './relay.js';

/** How far from the engine's clock a signature's timestamp may be, and so how long after it the engine may still accept it (engine contract §2). */
export const ENGINE_SIGNATURE_WINDOW_MS = 30_000;
/** How long a claim turned into the placed order keeps it when the live path could not (10 min, the old claim lifetime). */
export const PLACED_NOTE_TTL_MS = 600_000;

export interface ClientOrderLookup {
  clientOrder(party: string, clientOrderId: string): ClientOrderState | null;
  /** The live path's state: on, and the engine seq it has applied (status().maxSeq). */
  status?(): { enabled: boolean; maxSeq: number | null };
}

/** The order as a claim notes it: what the engine answered, or what the mirror / the engine's open orders hold. */
type NotedOrder = Record<string, unknown> & { clientOrderId: string; orderId: string | null; status: string };

/** What both routes say of an id: the live order, the claim (pending, or the order it turned into), the mirror's row. */
export interface ClientOrderFound {
  source: 'live' | 'claim' | 'mirror';
  order: object;
  /** A pending claim: when it settles at the latest (ISO 8601); ask again then. */
  settlesBy?: string;
}

export type SettledOutcome = 'refused' | 'live' | 'not_placed' | 'answer' | 'mirror' | 'engine' | 'unverified';

export interface ClientOrderIdsOptions {
  claims: Claims;
  live: ClientOrderLookup | null;
  /** The database mirror's order by client id (null without a database). */
  mirror: ((party: string, clientOrderId: string) => Promise<object | null>) | null;
  /** The party's non-terminal orders at the engine (its admin route; null when unavailable). */
  engineOpenOrders: ((party: string) => Promise<{ clientOrderId?: string | null; orderId: string; status: string }[] | null>) | null;
  /** The engine's newest seq (its /healthz maxSeq), null when it does not say. */
  engineHead: () => Promise<number | null>;
  clock: Clock;
  /** CLIENT_ORDER_CLAIM_MARGIN_MS: the engine's and the gateway's clocks apart, and its events on their way. */
  marginMs: number;
  onSettled?: (outcome: SettledOutcome) => void;
  log?: (err: unknown, msg: string) => void;
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

/** The signature's timestamp (`<tsMs>.<hex>`); null when it has none the engine could accept. */
function signedAt(call: CallInput): number | null {
  const sig = call.signature?.sig;
  if (!sig) return null;
  const ts = Number(sig.slice(0, sig.indexOf('.')));
  return Number.isSafeInteger(ts) && ts > 0 ? ts : null;
}

export function duplicateRefusal(clientOrderId: string, found: ClientOrderFound | null): ApiError {
  return new ApiError('duplicate_client_order_id', `clientOrderId ${JSON.stringify(clientOrderId)} was already used by this party: the order below`, {
    order: found?.order ?? pendingOrder(clientOrderId),
    ...(found?.settlesBy ? { settlesBy: found.settlesBy } : {}),
  });
}

function pendingOrder(clientOrderId: string): NotedOrder {
  return { clientOrderId, status: 'pending', orderId: null };
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

/** The order an accepted answer names (`{ok:true, orderId, status, filledSize, avgPrice}`), else null. */
function acceptedOrder(clientOrderId: string, answer: PassedAnswer | null): NotedOrder | null {
  if (!answer || answer.status < 200 || answer.status >= 300) return null;
  const json = parseJson(answer.body) as Record<string, unknown> | undefined;
  if (typeof json !== 'object' || json === null || json.ok !== true || typeof json.orderId !== 'string') return null;
  return { clientOrderId, orderId: json.orderId, status: String(json.status), filledSize: json.filledSize ?? null, avgPrice: json.avgPrice ?? null };
}

function notedOrder(held: HeldClaim): NotedOrder | null {
  if (held.note === '') return null;
  try {
    return JSON.parse(held.note) as NotedOrder;
  } catch {
    return null;
  }
}

const claimKey = (party: string, clientOrderId: string): string => `coid:${party}\n${clientOrderId}`;

export class ClientOrderIds {
  private readonly timers = new Set<ClockTimer>();
  private stopped = false;

  constructor(private readonly o: ClientOrderIdsOptions) {}

  /** The route's admission (forward.ts Admit): refuse a known id, else claim it while it is in flight. */
  readonly admit: Admit = (party, call) => {
    // Nothing to claim answers null at once (no promise): the call goes on without a microtask.
    if (party === null) return null;
    const clientOrderId = clientOrderIdOf(call.body);
    if (clientOrderId === null) return null;
    return this.claimed(party, clientOrderId, signedAt(call));
  };

  /** What both routes say of the id: live, else the claim, else the mirror; null when none knows it. */
  async find(party: string, clientOrderId: string): Promise<ClientOrderFound | null> {
    const held = await this.held(party, clientOrderId);
    if (held) return held;
    const row = await this.o.mirror?.(party, clientOrderId);
    return row ? { source: 'mirror', order: { ...row, clientOrderId } } : null;
  }

  /** The status route's answer: 404 `not_found` when no one knows the id. */
  async status(party: string, clientOrderId: string): Promise<ClientOrderFound> {
    const found = await this.find(party, clientOrderId);
    if (found) return found;
    throw new ApiError('not_found', `no order of this party with clientOrderId ${JSON.stringify(clientOrderId)} is known`);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) this.o.clock.clearTimeout(t);
    this.timers.clear();
  }

  /** The live order, else the claim's: what the 409 and the status route both answer. */
  private async held(party: string, clientOrderId: string): Promise<ClientOrderFound | null> {
    const known = this.o.live?.clientOrder(party, clientOrderId) ?? null;
    if (known && known.status !== 'rejected') return { source: 'live', order: known };
    // A rejected order frees its id: a claim held since (a new place of it) is the newer word.
    const claim = await this.o.claims.read(claimKey(party, clientOrderId));
    if (!claim) return known ? { source: 'live', order: known } : null;
    const noted = notedOrder(claim);
    if (noted) return { source: 'claim', order: noted };
    return { source: 'claim', order: pendingOrder(clientOrderId), settlesBy: new Date(this.o.clock.now() + claim.ttlMs).toISOString() };
  }

  /** Until when the engine may accept a place signed at `ts` (no later than the window from now either way), plus the margin. */
  private bound(ts: number | null): number {
    const now = this.o.clock.now();
    const closes = Math.min(Math.max(ts ?? now, now - ENGINE_SIGNATURE_WINDOW_MS), now + ENGINE_SIGNATURE_WINDOW_MS) + ENGINE_SIGNATURE_WINDOW_MS;
    return closes + this.o.marginMs;
  }

  private async claimed(party: string, clientOrderId: string, ts: number | null): Promise<Admitted> {
    const known = this.o.live?.clientOrder(party, clientOrderId) ?? null;
    if (known && known.status !== 'rejected') throw duplicateRefusal(clientOrderId, { source: 'live', order: known });
    const key = claimKey(party, clientOrderId);
    const until = this.bound(ts);
    if (!(await this.o.claims.claim(key, until - this.o.clock.now()))) throw duplicateRefusal(clientOrderId, await this.held(party, clientOrderId));
    return {
      settle: (answer, error) => {
        if (refusedForSure(answer, error)) {
          void this.o.claims.release(key);
          this.o.onSettled?.('refused');
          return;
        }
        const placed = acceptedOrder(clientOrderId, answer);
        if (placed) void this.o.claims.note(key, JSON.stringify(placed), until - this.o.clock.now()).catch((err: unknown) => this.o.log?.(err, 'client order id: noting the placed order failed'));
        // Halfway into the margin: the signature is dead at the engine, and there is time to act before the claim lapses.
        this.later(until - this.o.marginMs / 2, () => this.settleAtBound(key, party, clientOrderId));
      },
      // Never sent (a cancel-replace whose cancel failed): the id was not used.
      release: () => this.o.claims.release(key),
    };
  }

  private later(at: number, fn: () => Promise<void>): void {
    if (this.stopped) return;
    const timer = this.o.clock
      .setTimeout(() => {
        this.timers.delete(timer);
        if (!this.stopped) void fn();
      }, Math.max(0, at - this.o.clock.now()))
      .unref();
    this.timers.add(timer);
  }

  /** The signature can no longer be accepted: the claim becomes what the engine's record says (header). */
  private async settleAtBound(key: string, party: string, clientOrderId: string): Promise<void> {
    const { claims, live } = this.o;
    const done = async (outcome: SettledOutcome, order?: NotedOrder): Promise<void> => {
      if (order) await claims.note(key, JSON.stringify(order), PLACED_NOTE_TTL_MS);
      else await claims.release(key);
      this.o.onSettled?.(outcome);
    };
    try {
      if (live?.clientOrder(party, clientOrderId)) return await done('live');
      const held = await claims.read(key);
      if (!held) return; // released or lapsed meanwhile
      const answered = notedOrder(held);
      if (answered) return await done('answer', answered);
      if (await this.liveHoldsEngineHead()) return await done(live?.clientOrder(party, clientOrderId) ? 'live' : 'not_placed');
      const row = await this.o.mirror?.(party, clientOrderId).catch(() => null);
      if (row) return await done('mirror', { ...(row as NotedOrder), clientOrderId });
      const open = (await this.o.engineOpenOrders?.(party).catch(() => null))?.find((x) => x.clientOrderId === clientOrderId);
      if (open) return await done('engine', { ...open, clientOrderId });
      // No one can tell: the bound holds, the claim goes (docs/trading.md names this case).
      await done('unverified');
    } catch (err) {
      this.o.log?.(err, 'client order id: settling a claim failed; it lapses at its bound');
    }
  }

  /** Has the live path applied every event the engine had once the signature died? Waits up to a quarter of the margin for it (the claim lapses half a margin after the check begins). */
  private async liveHoldsEngineHead(): Promise<boolean> {
    const live = this.o.live;
    if (!live?.status || !live.status().enabled) return false;
    const head = await this.o.engineHead().catch(() => null);
    if (head === null) return false;
    const giveUp = this.o.clock.now() + this.o.marginMs / 4;
    for (;;) {
      const at = live.status().maxSeq;
      if (at !== null && at >= head) return true;
      if (this.o.clock.now() >= giveUp || this.stopped) return false;
      await this.o.clock.sleep(50);
    }
  }
}
