// The bound on what a stream client may send (docs/security.md "Connections and slow clients"):
// every message of a connection passes here before any handler sees it.
// - size: a message larger than `maxBytes` is not read but answered (`stream.error`
//   `payload_too_large`, by the handler's `onOversize`); ws itself refuses one larger than
//   `hardMaxBytes` (OVERSIZE_FACTOR × maxBytes) with close 1009, before any of it is buffered;
// - rate: a token bucket per connection, `ratePerS` messages a second with bursts of `burst`; a
//   client past it is closed with 1008 (policy violation) and what it sends after is dropped.
// Handlers of client messages (subscribe, unsubscribe, orders) are registered through
// `limitInbound`, so none of them can be reached by a client that floods.
import type WebSocket from 'ws';
import type { Config } from '../config/env.js';

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

export const CLOSE_POLICY_VIOLATION = 1008;
/** A closed abuser that does not complete the close handshake is cut after this. */
const CLOSE_GRACE_MS = 1_000;

/** A token bucket: `take()` is false once the client has spent more than the rate and burst allow. */
export class TokenBucket {
  private tokens: number;
  private at = performance.now();

  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }

  take(): boolean {
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.ratePerS);
    this.at = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * Receives the connection's messages under the bound and hands those within it to `onMessage`
 * (which may be replaced by other message handlers; none is reached past the bound).
 */
export function limitInbound(
  ws: WebSocket,
  limits: InboundLimits,
  onMessage: (data: Buffer, isBinary: boolean) => void,
  onAbuse: () => void = () => {},
  /** A message over `maxBytes` (ws refused any over hardMaxBytes already); dropped when absent. */
  onOversize: (data: Buffer) => void = () => {},
): void {
  const bucket = new TokenBucket(limits.ratePerS, limits.burst);
  let closing = false;
  ws.on('message', (data, isBinary) => {
    if (closing) return;
    if (bucket.take()) {
      // ws hands a text or binary message over as one Buffer (no fragments array: binaryType is the default).
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]);
      return bytes.length > limits.maxBytes ? onOversize(bytes) : onMessage(bytes, isBinary);
    }
    closing = true;
    onAbuse();
    ws.close(CLOSE_POLICY_VIOLATION, 'too many messages');
    setTimeout(() => ws.terminate(), CLOSE_GRACE_MS).unref();
  });
}
