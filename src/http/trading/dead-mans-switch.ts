// The dead man's switch (docs/trading.md "Dead man's switch"), holding no key. A trader arms it, on
// a stream connection that holds its party, with signed cancels of its open orders, timestamped
// ahead so they stay inside the engine's ±30 s window for a while; it refreshes them, and every
// arm or heartbeat pushes the deadline to now + timeout. When the deadline passes (the connection
// dropped, or the heartbeats stopped) — or, at the latest, shortly before the earliest cancel would
// leave its window — the gateway sends the cancels to the engine, each as the DELETE it was signed
// as. It holds only cancels (a place cannot be armed), so it can cancel what the trader signed and
// nothing else. The state is in the switch store (Redis for a fleet), and every replica looks for
// due switches, so a switch fires even when the replica that held its connection died.
//
// What it promises beyond that (docs/adr/0200-switch-fencing.md): once a disarm is answered the
// switch never fires (the store fences it: an arm in flight cannot write it back, a heartbeat only
// moves a switch still armed); the calls of one switch are applied in the order they arrived; a
// heartbeat costs O(1) in the store (the calls' budget is spent by the pipeline, in the switch's
// ordered lane, in the order they are applied: src/http/calls/switch-*.ts, ADR 0321); and each due
// switch fires on its own, its cancels sharing the engine fairly with the others' (switch-firing.ts).
import { randomUUID } from 'node:crypto';
import type { SessionKeys } from '../../auth/session-keys.js';
import { verifySignedRequest } from '../../auth/signed-request.js';
import { systemClock, type Clock, type ClockTimer } from '../../contracts/clock.js';
import type { ArmedSwitch, SignedCancel, SwitchDeadline, SwitchStore } from '../../contracts/switch-store.js';
import { ApiError, fromDomainError } from '../errors.js';
import type { RouteCall } from './forward.js';
import { orderIdPath } from './targets.js';
import { FairFiring, KeyedOrder, KeyedSlots } from './switch-firing.js';

/** Timeout bounds: at least a second; at most 30 s, so a heartbeat-driven deadline always falls inside a refreshed cancel's window. */
export const MIN_TIMEOUT_MS = 1_000;
export const MAX_TIMEOUT_MS = 30_000;
/** Most cancels one switch holds. */
export const MAX_SWITCH_CANCELS = 200;
/** Most switches (names) one party holds at once: names are the party's to choose, so they are bounded. */
export const MAX_SWITCHES_PER_PARTY = 16;
/** A switch fires this long before its earliest cancel leaves the engine's window (clock skew, the call's own time). */
export const EXPIRY_MARGIN_MS = 3_000;
/** How often each replica looks for due switches. */
export const POLL_MS = 250;
/** Due switches taken per look; a full take is followed by another at once. */
export const TAKE_MAX = 100;
/** Cancels of fired switches in flight at once per replica, shared in turns (switch-firing.ts). */
export const FIRE_IN_FLIGHT = 32;
/**
 * Cancel signature checks of one client address's arms on the thread pool at once (ADR 0351). Fifty
 * arms of 200 cancels from one address (within its budget) put 10 000 checks on the pool in one go,
 * and their dispatch and answers held the event loop for seconds; bounded, they are dispatched as
 * earlier ones finish, each answer a turn of the loop that other clients' work interleaves with, and
 * one address keeps at most two of the pool's threads (four by default) busy.
 */
export const ARM_CHECKS_PER_ADDRESS = 2;
const WINDOW_MS = 30_000;

/** Verifies a signature without spending it: the switch sends it later, and only the engine judges it then. */
const NEVER_SPENT = { firstUse: async () => true, spent: async (keys: readonly string[]) => keys.map(() => false) };

export interface ArmRequest {
  party: string;
  sessionId: string;
  name: string;
  timeoutMs: number;
  cancels: SignedCancel[];
}

export interface ArmedAnswer {
  name: string;
  cancels: number;
  timeoutMs: number;
  /** Unix ms: when it fires unless a heartbeat or arm comes first. */
  fireAt: number;
  /** Unix ms after which its cancels would no longer be valid (it fires EXPIRY_MARGIN_MS before). */
  validUntil: number;
}

export interface FiredSwitch {
  key: string;
  party: string;
  /** Unix ms it was due, and when its last cancel was answered. */
  fireAt: number;
  doneAt: number;
  results: { orderId: string; status: number; code: string | null }[];
}

export interface SwitchOptions {
  store: SwitchStore;
  sessions: SessionKeys;
  cancel: RouteCall;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Told of every switch this replica fired (metrics, tests). */
  onFired?: (fired: FiredSwitch) => void;
  clock?: Clock;
  /** Cancels of fired switches in flight at once (FIRE_IN_FLIGHT). */
  fireInFlight?: number;
}

const keyOf = (party: string, name: string): string => `${party}\n${name}`;

export class DeadMansSwitch {
  private timer: ClockTimer | null = null;
  private running = false;
  private polling: Promise<void> | null = null;
  private readonly clock: Clock;
  private readonly order = new KeyedOrder();
  private readonly firing: FairFiring;
  private readonly fires = new Set<Promise<void>>();
  private readonly checks = new KeyedSlots(ARM_CHECKS_PER_ADDRESS);

  constructor(private readonly o: SwitchOptions) {
    this.clock = o.clock ?? systemClock;
    this.firing = new FairFiring(o.fireInFlight ?? FIRE_IN_FLIGHT);
  }

  /**
   * Arms or re-arms (a heartbeat too). Every cancel must verify as the party's session's over its
   * DELETE. Applied in turn with the switch's other calls; refused 409 `switch_disarmed` when a
   * disarm (or the switch firing) came, on any replica, after this arm began.
   */
  /** `address`: the client address whose arms share ARM_CHECKS_PER_ADDRESS check slots (the party's without one). */
  arm(request: ArmRequest, address?: string): Promise<ArmedAnswer> {
    return this.order.run(keyOf(request.party, request.name), () => this.armNow(request, address));
  }

  private async armNow(request: ArmRequest, address: string | undefined): Promise<ArmedAnswer> {
    const { party, sessionId, name, timeoutMs, cancels } = request;
    const key = keyOf(party, name);
    // Read first: a disarm answered after this moment, here or on another replica, wins over this arm.
    const fence = await this.o.store.fence(key);
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < MIN_TIMEOUT_MS || timeoutMs > MAX_TIMEOUT_MS) {
      throw new ApiError('bad_request', `timeoutMs must be an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}`);
    }
    if (cancels.length > MAX_SWITCH_CANCELS) throw new ApiError('bad_request', `a switch holds at most ${MAX_SWITCH_CANCELS} cancels`);
    const now = this.clock.now();
    const held = await this.o.store.namesOf(party, now);
    if (!held.includes(name) && held.length >= MAX_SWITCHES_PER_PARTY) {
      throw new ApiError('too_many_switches', `a party holds at most ${MAX_SWITCHES_PER_PARTY} switches (${held.length} armed): disarm one or re-arm one of its names`);
    }
    let validUntil = Number.POSITIVE_INFINITY;
    // Up to 200 ed25519 checks, on the thread pool so the event loop is not held, at most
    // ARM_CHECKS_PER_ADDRESS of the address's arms at once.
    const slots = address ?? party;
    const verdicts = await Promise.all(
      cancels.map((c) =>
        this.checks.run(slots, () => verifySignedRequest(this.o.sessions, NEVER_SPENT, { method: 'DELETE', target: orderIdPath(c.orderId), body: '', headers: { user: party, sessionId, sig: c.sig }, now, offThread: true })),
      ),
    );
    verdicts.forEach((verdict, i) => {
      const c = cancels[i]!;
      if (!verdict.ok) throw new ApiError('unauthorized', `the cancel of ${JSON.stringify(c.orderId)} does not verify: ${verdict.refusal.message}`, { orderId: c.orderId });
      validUntil = Math.min(validUntil, Number(c.sig.slice(0, c.sig.indexOf('.'))) + WINDOW_MS);
    });
    if (cancels.length === 0) validUntil = now + WINDOW_MS + EXPIRY_MARGIN_MS + MAX_TIMEOUT_MS;
    const fireAt = Math.min(now + timeoutMs, validUntil - EXPIRY_MARGIN_MS);
    if (fireAt <= now) throw new ApiError('bad_request', 'the cancels leave the ±30 s window too soon: sign them with timestamps ahead of now (docs/trading.md "Dead man\'s switch")');
    const state: ArmedSwitch = { key, party, sessionId, name, cancels, timeoutMs, heartbeatAt: now, validUntil, fireAt };
    if (!(await this.o.store.put(state, fence))) {
      throw new ApiError('switch_disarmed', `switch ${JSON.stringify(name)} was disarmed (or fired) while this arm was in flight: nothing was armed; arm again to arm it`);
    }
    return { name, cancels: cancels.length, timeoutMs, fireAt, validUntil };
  }

  /** Pushes the deadline of an armed switch to now + its timeout (never past its cancels' validity): O(1) in the store. */
  heartbeat(party: string, name: string): Promise<ArmedAnswer> {
    return this.order.run(keyOf(party, name), async () => {
      const moved: SwitchDeadline | null = await this.o.store.heartbeat(keyOf(party, name), this.clock.now(), EXPIRY_MARGIN_MS);
      if (!moved) throw new ApiError('not_found', `no armed switch ${JSON.stringify(name)} for this party (it fired, was disarmed, or was never armed)`);
      return { name, cancels: moved.cancels, timeoutMs: moved.timeoutMs, fireAt: moved.fireAt, validUntil: moved.validUntil };
    });
  }

  /** Removes it: once answered, it never fires (`disarmed: false`: none was armed, or it had already been taken to fire). */
  disarm(party: string, name: string): Promise<{ name: string; disarmed: boolean }> {
    return this.order.run(keyOf(party, name), async () => {
      return { name, disarmed: await this.o.store.remove(keyOf(party, name)) };
    });
  }

  /** Starts looking for due switches (every replica does). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule();
  }

  private schedule(): void {
    if (!this.running) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      void this.poll().finally(() => this.schedule());
    }, POLL_MS);
    this.timer.unref();
  }

  /** Stops looking; waits for the switches being fired to be sent. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.polling;
    await Promise.all([...this.fires]);
  }

  /** Takes every switch due now that this replica gets, and starts firing each (not waiting for any). */
  poll(): Promise<void> {
    this.polling ??= this.takeAll().finally(() => (this.polling = null));
    return this.polling;
  }

  private async takeAll(): Promise<void> {
    try {
      for (;;) {
        const due = await this.o.store.takeDue(this.clock.now(), TAKE_MAX);
        for (const s of due) {
          const firing = this.fire(s).finally(() => this.fires.delete(firing));
          this.fires.add(firing);
        }
        if (due.length < TAKE_MAX) return;
      }
    } catch (err) {
      this.o.log.warn({ err }, 'dead man\'s switch: could not look for due switches');
    }
  }

  private async fire(s: ArmedSwitch): Promise<void> {
    const requestId = `switch-${randomUUID()}`;
    const results = await this.firing.fire(s.cancels, (c) => this.sendCancel(s, c, requestId));
    const fired: FiredSwitch = { key: s.key, party: s.party, fireAt: s.fireAt, doneAt: this.clock.now(), results };
    this.o.log.info({ party: s.party, name: s.name, cancels: results.length, refused: results.filter((r) => r.code !== null).length, requestId }, 'dead man\'s switch fired');
    this.o.onFired?.(fired);
  }

  private async sendCancel(s: ArmedSwitch, c: SignedCancel, requestId: string): Promise<FiredSwitch['results'][number]> {
    try {
      const answer = await this.o.cancel({
        method: 'DELETE',
        target: orderIdPath(c.orderId),
        body: undefined,
        signature: { user: s.party, sessionId: s.sessionId, sig: c.sig },
        requestId,
        precharged: true,
        party: s.party,
      });
      const body = JSON.parse(answer.body.toString('utf8')) as { ok?: unknown; code?: unknown };
      return { orderId: c.orderId, status: answer.status, code: body.ok === true ? null : String(body.code ?? 'refused') };
    } catch (err) {
      const known = fromDomainError(err);
      return { orderId: c.orderId, status: known?.status ?? 500, code: known?.code ?? 'internal_error' };
    }
  }
}
