// What the live runtime and the upgrade handler need from the fan-out, whether it runs in this
// process (StreamHub) or in worker processes fed by this one (WorkerFanout, WS_WORKERS > 0), and
// the IPC shapes between the gateway process and its fan-out workers.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { CandleInterval, Frame } from '../projections/types.js';
import type { Subscription } from './subscription.js';

export interface StreamFanout {
  /** false without ENGINE_ADMIN_TOKEN: clients connect and receive nothing. */
  readonly enabled: boolean;
  /** Open connections (for the connection limit and metrics). */
  readonly size: number;
  readonly isClosed: boolean;
  /** Completes the WebSocket handshake of an authorised upgrade and registers the connection. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, sub: Subscription): void;
  publish(frame: Frame): void;
  publishAll(frames: readonly Frame[]): void;
  /** Runs `fn` (which publishes): its frames leave for each client in one write. */
  batched(fn: () => void): void;
  markCoveredAfter(seq: number): void;
  resetHistory(seq: number): void;
  setKnownMarkets(known: ReadonlySet<string> | null): void;
  /** Shutdown: every client gets close code 1001; new connections are refused. */
  closeAll(): Promise<void>;
  /** Releases what closeAll left running (fan-out worker processes), once the HTTP server has closed. */
  stop(): Promise<void>;
}

/**
 * What a worker needs of a frame to route it (kind, seq, market, interval, party); the bytes travel
 * beside it, serialised once in the gateway process. The payload stays behind.
 */
export type RoutedFrame = Pick<Frame, 'kind' | 'seq' | 'ts' | 'market' | 'interval' | 'party' | 'userParty'>;

export function routingView(frame: Frame): RoutedFrame {
  const r: RoutedFrame = { kind: frame.kind, seq: frame.seq, ts: frame.ts };
  if (frame.market !== undefined) r.market = frame.market;
  if (frame.interval !== undefined) r.interval = frame.interval;
  if (frame.party !== undefined) r.party = frame.party;
  if (frame.userParty !== undefined) r.userParty = frame.userParty;
  return r;
}

/** A Subscription as plain JSON (sets as arrays; the proof stays in the gateway process). */
export interface WireSubscription {
  kinds: string[] | null;
  requestedMarkets: string[] | null;
  markets: string[] | null;
  marketsIgnored: boolean;
  intervals: CandleInterval[] | null;
  parties: string[];
  since: number | null;
  control: boolean;
}

export function subscriptionToWire(sub: Subscription): WireSubscription {
  return {
    kinds: sub.kinds ? [...sub.kinds] : null,
    requestedMarkets: sub.requestedMarkets ? [...sub.requestedMarkets] : null,
    markets: sub.markets ? [...sub.markets] : null,
    marketsIgnored: sub.marketsIgnored,
    intervals: sub.intervals ? [...sub.intervals] : null,
    parties: [...sub.parties],
    since: sub.since,
    control: sub.control,
  };
}

export function subscriptionFromWire(w: WireSubscription): Subscription {
  return {
    kinds: w.kinds ? new Set(w.kinds) : null,
    requestedMarkets: w.requestedMarkets,
    markets: w.markets ? new Set(w.markets) : null,
    marketsIgnored: w.marketsIgnored,
    intervals: w.intervals ? new Set(w.intervals) : null,
    parties: new Set(w.parties),
    since: w.since,
    control: w.control,
    proof: null,
  };
}

/** Gateway process → worker. A `client` message carries the connection's socket as its handle. */
export type ToWorker =
  | { t: 'client'; sub: WireSubscription; req: { method: string; url: string; headers: IncomingMessage['headers'] }; head: string }
  /** Frames of one batch (one SSE chunk), in order: routing view + serialised JSON. */
  | { t: 'frames'; frames: Array<[RoutedFrame, string]> }
  | { t: 'covered'; seq: number }
  | { t: 'reset'; seq: number }
  | { t: 'markets'; known: string[] | null }
  | { t: 'close' };

/** Worker → gateway process: counters since the previous report, and lifecycle. */
export type FromWorker =
  | { t: 'ready' }
  /**
   * `clients`: connections open now; `accepted`: `client` messages handled so far (the gateway adds
   * the hand-overs still in transit, so a report written before one arrived cannot undercount).
   */
  | { t: 'stats'; clients: number; accepted: number; sent: Record<string, number>; dropped: Record<string, number>; slowCloses: number }
  | { t: 'closed' };
