// The dead man's switch's shared state (docs/trading.md "Dead man's switch"): armed switches, each
// holding the signed cancels its trader gave it, and when it is due. In process memory for a single
// gateway, in Redis for a fleet (src/fleet/switch-store.ts), so that whichever replica sees a
// switch due fires it, even when the replica that armed it is dead.

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

export interface SwitchStore {
  /** Arms (or re-arms) the switch of `state.key`. */
  put(state: ArmedSwitch): Promise<void>;
  get(key: string): Promise<ArmedSwitch | null>;
  remove(key: string): Promise<void>;
  /**
   * Takes the switches due at `now` (fireAt ≤ now), at most `max`: each is given to exactly one
   * caller, whichever replica asks first, and is no longer armed.
   */
  takeDue(now: number, max: number): Promise<ArmedSwitch[]>;
  /** The names of the party's switches armed now (for the per-party bound; a fleet's count may lag a fired one by its validity). */
  namesOf(party: string, now: number): Promise<string[]>;
}
