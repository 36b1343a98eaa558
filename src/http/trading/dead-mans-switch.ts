// The dead man's switch (docs/trading.md "Dead man's switch"), holding no key. A trader arms it, on
// a stream connection that holds its party, with signed cancels of its open orders, timestamped
// ahead so they stay inside the engine's ±30 s window for a while; it refreshes them, and every
// arm or heartbeat pushes the deadline to now + timeout. When the deadline passes (the connection
// dropped, or the heartbeats stopped) — or, at the latest, shortly before the earliest cancel would
// leave its window — the gateway sends the cancels to the engine, each as the DELETE it was signed
// as. It holds only cancels (a place cannot be armed), so it can cancel what the trader signed and
// nothing else. The state is in the switch store (Redis for a fleet), and every replica looks for
// due switches, so a switch fires even when the replica that held its connection died.
import { randomUUID } from 'node:crypto';
import type { SessionKeys } from '../../auth/session-keys.js';
import { verifySignedRequest } from '../../auth/signed-request.js';
import type { ArmedSwitch, SignedCancel, SwitchStore } from '../../contracts/switch-store.js';
import { ApiError, fromDomainError } from '../errors.js';
import type { RouteCall } from './forward.js';
import { orderIdPath } from './targets.js';

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
const WINDOW_MS = 30_000;
/** Verifies a signature without spending it: the switch sends it later, and only the engine judges it then. */
const NEVER_SPENT = { firstUse: async () => true };

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
  results: { orderId: string; status: number; code: string | null }[];
}

export interface SwitchOptions {
  store: SwitchStore;
  sessions: SessionKeys;
  cancel: RouteCall;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Told of every switch this replica fired (metrics, tests). */
  onFired?: (fired: FiredSwitch) => void;
  now?: () => number;
}

const keyOf = (party: string, name: string): string => `${party}\n${name}`;

export class DeadMansSwitch {
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private readonly now: () => number;

  constructor(private readonly o: SwitchOptions) {
    this.now = o.now ?? Date.now;
  }

  /** Arms or re-arms (a heartbeat too). Every cancel must verify as the party's session's over its DELETE. */
  async arm(request: ArmRequest): Promise<ArmedAnswer> {
    const { party, sessionId, name, timeoutMs, cancels } = request;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < MIN_TIMEOUT_MS || timeoutMs > MAX_TIMEOUT_MS) {
      throw new ApiError('bad_request', `timeoutMs must be an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}`);
    }
    if (cancels.length > MAX_SWITCH_CANCELS) throw new ApiError('bad_request', `a switch holds at most ${MAX_SWITCH_CANCELS} cancels`);
    const now = this.now();
    const held = await this.o.store.namesOf(party, now);
    if (!held.includes(name) && held.length >= MAX_SWITCHES_PER_PARTY) {
      throw new ApiError('too_many_switches', `a party holds at most ${MAX_SWITCHES_PER_PARTY} switches (${held.length} armed): disarm one or re-arm one of its names`);
    }
    let validUntil = Number.POSITIVE_INFINITY;
    // Up to 200 ed25519 checks: on the thread pool, all at once, so the event loop is not held.
    const verdicts = await Promise.all(
      cancels.map((c) => verifySignedRequest(this.o.sessions, NEVER_SPENT, { method: 'DELETE', target: orderIdPath(c.orderId), body: '', headers: { user: party, sessionId, sig: c.sig }, now, offThread: true })),
    );
    verdicts.forEach((verdict, i) => {
      const c = cancels[i]!;
      if (!verdict.ok) throw new ApiError('unauthorized', `the cancel of ${JSON.stringify(c.orderId)} does not verify: ${verdict.refusal.message}`, { orderId: c.orderId });
      validUntil = Math.min(validUntil, Number(c.sig.slice(0, c.sig.indexOf('.'))) + WINDOW_MS);
    });
    if (cancels.length === 0) validUntil = now + WINDOW_MS + EXPIRY_MARGIN_MS + MAX_TIMEOUT_MS;
    const fireAt = Math.min(now + timeoutMs, validUntil - EXPIRY_MARGIN_MS);
    if (fireAt <= now) throw new ApiError('bad_request', 'the cancels leave the ±30 s window too soon: sign them with timestamps ahead of now (docs/trading.md "Dead man\'s switch")');
    const state: ArmedSwitch = { key: keyOf(party, name), party, sessionId, name, cancels, timeoutMs, heartbeatAt: now, validUntil, fireAt };
    await this.o.store.put(state);
    return { name, cancels: cancels.length, timeoutMs, fireAt, validUntil };
  }

  /** Pushes the deadline of an armed switch to now + its timeout (never past its cancels' validity). */
  async heartbeat(party: string, name: string): Promise<ArmedAnswer> {
    const state = await this.o.store.get(keyOf(party, name));
    if (!state) throw new ApiError('not_found', `no armed switch ${JSON.stringify(name)} for this party (it fired, or was never armed)`);
    const now = this.now();
    const next = { ...state, heartbeatAt: now, fireAt: Math.min(now + state.timeoutMs, state.validUntil - EXPIRY_MARGIN_MS) };
    await this.o.store.put(next);
    return { name, cancels: next.cancels.length, timeoutMs: next.timeoutMs, fireAt: next.fireAt, validUntil: next.validUntil };
  }

  async disarm(party: string, name: string): Promise<{ name: string; disarmed: boolean }> {
    const key = keyOf(party, name);
    const held = await this.o.store.get(key);
    await this.o.store.remove(key);
    return { name, disarmed: held !== null };
  }

  /** Starts looking for due switches (every replica does). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Fires every switch due now that this replica gets to take. */
  async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const due = await this.o.store.takeDue(this.now(), 50);
      await Promise.all(due.map((s) => this.fire(s)));
    } catch (err) {
      this.o.log.warn({ err }, 'dead man\'s switch: could not look for due switches');
    } finally {
      this.polling = false;
    }
  }

  private async fire(s: ArmedSwitch): Promise<void> {
    const requestId = `switch-${randomUUID()}`;
    const results = await Promise.all(
      s.cancels.map(async (c) => {
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
      }),
    );
    const fired: FiredSwitch = { key: s.key, party: s.party, results };
    this.o.log.info({ party: s.party, name: s.name, cancels: results.length, refused: results.filter((r) => r.code !== null).length, requestId }, 'dead man\'s switch fired');
    this.o.onFired?.(fired);
  }
}
