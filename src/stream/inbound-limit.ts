// The bound on what a stream client may send (docs/security.md "Connections and slow clients"):
// every message of a connection passes here before any handler sees it.
// - size: a message larger than `maxBytes` is not read but answered (`stream.error`
//   `payload_too_large`, by the handler's `onOversize`); ws itself refuses one larger than
//   `hardMaxBytes` (OVERSIZE_FACTOR × maxBytes) with close 1009, before any of it is buffered;
// - rate: a token bucket per connection, `ratePerS` messages a second with bursts of `burst`; a
//   client past it is closed with 1008 (policy violation) and what it sends after is dropped; the
//   time this process's loop was held is credited (loop-stalls.ts, ADR 0381);
// - address rate: one bucket shared by every connection of a client address (WS_ADDRESS_MESSAGES_PER_S,
//   ADR 0350), checked as cheaply, before the message is read: fifty connections each within its
//   own rate made 1 000 messages a second from one address, each parsed, refused and answered on the
//   event loop every client shares. The connection whose message finds it empty is closed with 1008.
// Handlers of client messages (subscribe, unsubscribe, orders) are registered through
// `limitInbound`, so none of them can be reached by a client that floods.
import type WebSocket from 'ws';
import type { Config } from '../config/env.js';
import { POLICY_VIOLATION as CLOSE_POLICY_VIOLATION } from './close-codes.js';
import type { LoopStalls } from './loop-stalls.js';

export interface InboundLimits {
  /** Largest message, bytes (WS_CLIENT_MESSAGE_MAX_BYTES). */
  maxBytes: number;
  /** Sustained messages per second (WS_CLIENT_MESSAGES_PER_S). */
  ratePerS: number;
  /** Messages allowed at once above the rate (WS_CLIENT_MESSAGE_BURST). */
  burst: number;
}

/** The defaults of the settings (docs/configuration.md). */
export const DEFAULT_INBOUND_LIMITS: InboundLimits = { maxBytes: 65_536, ratePerS: 20, burst: 40 };

export function inboundLimits(config: Pick<Config, 'wsClientMessageMaxBytes' | 'wsClientMessagesPerS' | 'wsClientMessageBurst'>): InboundLimits {
  return { maxBytes: config.wsClientMessageMaxBytes, ratePerS: config.wsClientMessagesPerS, burst: config.wsClientMessageBurst };
}

/** Messages up to this many times maxBytes are received (and answered as too large); larger ones close the connection. */
export const OVERSIZE_FACTOR = 4;

/** ws's maxPayload: past it ws closes the connection with 1009. */
export function hardMaxBytes(limits: InboundLimits): number {
  return limits.maxBytes * OVERSIZE_FACTOR;
}

/** A closed abuser that does not complete the close handshake is cut after this. */
const CLOSE_GRACE_MS = 1_000;

/**
 * A token bucket: `take()` is false once the client has spent more than the rate and burst allow.
 * The time this process's loop was held since the last take raises the cap above `burst` (ADR
 * 0381): the messages a client sent at its rate while the loop could not read them arrive at once,
 * and are not a flood. The refill is still the rate over the time elapsed, so a client that sends
 * past its rate is closed as before, stalls or not.
 */
export class TokenBucket {
  private tokens: number;
  /**
   * When `tokens` was last refilled. It starts at the clock's origin: the bucket starts full either
   * way (any time since refills it to `burst`), and an idle connection keeps no boxed number
   * (a float field costs a heap number per connection; the first message makes it one).
   */
  private at = 0;

  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  take(stalls: LoopStalls): boolean {
    const now = stalls.now();
    const elapsed = Math.max(0, now - this.at);
    const cap = this.burst + (stalls.heldSince(this.at, now) / 1000) * this.ratePerS;
    // Above the cap nothing refills, and what is there is kept: the messages of one stall are read
    // in several takes, only the first of which sees the stall since the last take.
    this.tokens = Math.min(Math.max(cap, this.tokens), this.tokens + (elapsed / 1000) * this.ratePerS);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The bound shared by the connections of one client address (ADR 0350). */
export interface AddressInbound {
  bucket: TokenBucket;
  /** A connection of the address was closed for the address's rate (the upgrade gate refuses its next upgrades a while). */
  flooded(): void;
}

/** What receives one connection's messages under the bound. */
export interface InboundSink {
  /** A message within the bound (ws hands a text or binary message over as one Buffer). */
  inbound(data: Buffer, isBinary: boolean): void;
  /** A message over `maxBytes` (ws refused any over hardMaxBytes already). */
  oversize(data: Buffer): void;
  /** The connection sent past the rate: it is being closed with 1008; what it sends after is dropped. */
  abuse(): void;
}

/** One connection's bound: its bucket and where its messages go. */
class InboundGate extends TokenBucket {
  closing = false;

  constructor(
    limits: InboundLimits,
    readonly maxBytes: number,
    readonly sink: InboundSink,
    readonly address: AddressInbound | null,
    readonly stalls: LoopStalls,
  ) {
    super(limits.ratePerS, limits.burst);
  }
}

const GATE = Symbol('inbound gate');
type Gated = WebSocket & { [GATE]?: InboundGate };

/**
 * The 'message' listener of every bounded connection: one function for all (found through the
 * socket), not a closure per connection, which would cost memory on every idle connection.
 */
function onMessage(this: Gated, data: WebSocket.RawData, isBinary: boolean): void {
  const gate = this[GATE];
  if (!gate || gate.closing) return;
  const own = gate.take(gate.stalls);
  if (own && (gate.address === null || gate.address.bucket.take(gate.stalls))) {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]);
    return bytes.length > gate.maxBytes ? gate.sink.oversize(bytes) : gate.sink.inbound(bytes, isBinary);
  }
  gate.closing = true;
  gate.sink.abuse();
  if (!own) this.close(CLOSE_POLICY_VIOLATION, 'too many messages');
  else {
    gate.address!.flooded();
    this.close(CLOSE_POLICY_VIOLATION, 'too many messages from this address');
  }
  setTimeout(terminate, CLOSE_GRACE_MS, this).unref();
}

function terminate(ws: WebSocket): void {
  ws.terminate();
}

/**
 * Receives the connection's messages under the bound and hands those within it to `sink` (none
 * of its handlers is reached past the bound).
 */
export function limitInbound(ws: WebSocket, limits: InboundLimits, sink: InboundSink, stalls: LoopStalls, address: AddressInbound | null = null): void {
  (ws as Gated)[GATE] = new InboundGate(limits, limits.maxBytes, sink, address, stalls);
  ws.on('message', onMessage);
}
