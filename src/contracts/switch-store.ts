// The dead man's switch's shared state (docs/trading.md "Dead man's switch"): armed switches, each
// holding the signed cancels its trader gave it, and when it is due. In process memory for a single
// gateway, in Redis for a fleet (src/fleet/switch-store.ts), so that whichever replica sees a
// switch due fires it, even when the replica that armed it is dead.
//
// Two promises every implementation keeps (docs/adr/0200-switch-fencing.md):
// - Fenced: each switch has a fence, moved by every disarm and every take for firing. An arm reads
//   the fence before its checks and writes only if it has not moved since, in one atomic step, so
//   an arm still in flight when a disarm is answered cannot write the switch back.
// - O(1) heartbeats: the deadline is kept apart from the cancels; a heartbeat moves the deadline of
//   a switch that is armed (atomically: never one disarmed or taken meanwhile) and rewrites nothing else.

/** One signed cancel: `DELETE /v1/orders/<encodeURIComponent(orderId)>` signed by the session key. */
export interface SignedCancel {
  orderId: string;
  sig: string;
}

export interface ArmedSwitch {
  /** `<party>\n<name>`: one switch per party and name. */
  key: string;
  party: string;
  sessionId: string;
  name: string;
  cancels: SignedCancel[];
  timeoutMs: number;
  /** Unix ms of the last arm or heartbeat. */
  heartbeatAt: number;
  /** Unix ms after which the earliest-expiring cancel is no longer inside the engine's window. */
  validUntil: number;
  /** Unix ms when it fires: heartbeatAt + timeoutMs, or earlier so the cancels are sent before they expire. */
  fireAt: number;
}

/** What a heartbeat leaves armed (the answer to the client). */
export interface SwitchDeadline {
  fireAt: number;
  timeoutMs: number;
  validUntil: number;
  cancels: number;
}

export interface SwitchStore {
  /** The switch's fence now (a number that only grows; 0 for a switch never disarmed or fired). */
  fence(key: string): Promise<number>;
  /**
   * Arms (or re-arms) the switch of `state.key`, atomically, only if its fence is still `fence`:
   * false (nothing written) when a disarm or a fire moved it since the caller read it.
   */
  put(state: ArmedSwitch, fence: number): Promise<boolean>;
  /**
   * Moves the deadline of the armed switch `key` to min(now + timeoutMs, validUntil − marginMs),
   * atomically and nothing else; null when none is armed (never armed, disarmed, or taken to fire).
   */
  heartbeat(key: string, now: number, marginMs: number): Promise<SwitchDeadline | null>;
  /** Disarms: removes the switch and moves its fence; true when one was armed (not yet taken to fire). */
  remove(key: string): Promise<boolean>;
  /**
   * Takes the switches due at `now` (fireAt ≤ now), at most `max`, most overdue first: each is
   * given to exactly one caller, whichever replica asks first, is no longer armed, and its fence moved.
   */
  takeDue(now: number, max: number): Promise<ArmedSwitch[]>;
  /** The names of the party's switches armed now (for the per-party bound; a fleet's count may lag a fired one by its validity). */
  namesOf(party: string, now: number): Promise<string[]>;
}
