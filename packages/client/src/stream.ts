// Client of the gateway's live stream `/v1/stream` (spec §6) with the reconnect rule: remember the
// last seq processed; after a reconnect, fetch `/v1/events?since=<seq>` page by page and hand those
// events over before any live frame, so the consumer sees no gap. Live frames that arrive during
// the backfill are held back and released afterwards, minus what the backfill already covered.
//
// Seq bookkeeping: several frames can share one seq (a fill yields trade, position, balance and
// candle frames), so duplicates are recognised by (seq, kind, market, party, interval), and a live
// frame at or below the highest backfilled seq is dropped (the backfilled raw event stands for it).
// `orderbook.snapshot` frames are full books carrying the book's seq, not an event's: they are
// always delivered and never move the resume point.
import { backoffDelay } from './retry.js';
import type { GatewayClient } from './client.js';
import type { EngineEvent, Frame } from './types.js';

/** The part of the WebSocket API the client uses (browser WebSocket and the `ws` package both fit). */
export interface WebSocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  close(code?: number, reason?: string): void;
}
export type WebSocketCtor = new (url: string) => WebSocketLike;

export type StreamMessage = { source: 'live'; frame: Frame } | { source: 'backfill'; event: EngineEvent };
export type StreamState = 'connecting' | 'backfilling' | 'live' | 'waiting' | 'stopped';

export interface StreamOptions {
  client: GatewayClient;
  kinds?: string[];
  /** Parties whose user-scoped frames to receive; the client's session must prove them. */
  party?: string[];
  markets?: string[];
  intervals?: string[];
  /** Resume point: the last seq the consumer processed before this client existed. */
  lastSeq?: number | null;
  onMessage: (message: StreamMessage) => void;
  onState?: (state: StreamState) => void;
  onError?: (error: unknown) => void;
  WebSocket?: WebSocketCtor;
  reconnect?: { baseDelayMs?: number; maxDelayMs?: number; random?: () => number };
}

const DERIVED_FROM_FILLS = new Set(['position.update', 'balance.update', 'trade', 'candle.update', 'candle.close']);

export class StreamClient {
  private ws: WebSocketLike | null = null;
  private stopped = false;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private held: Frame[] | null = null;
  /** Highest event seq the consumer has been given (the resume point). */
  private last: number | null;
  /** Highest seq covered by backfilled raw events. */
  private backfilledTo = -1;
  private seenAtLast = new Set<string>();

  constructor(private readonly options: StreamOptions) {
    this.last = options.lastSeq ?? null;
  }

  get lastSeq(): number | null {
    return this.last;
  }

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.ws?.close(1000, 'client stop');
    this.ws = null;
    this.setState('stopped');
  }

  private setState(state: StreamState): void {
    this.options.onState?.(state);
  }

  private async url(): Promise<string> {
    const base = this.options.client.transport.baseUrl.replace(/^http/, 'ws');
    const params = new URLSearchParams();
    const { kinds, party, markets, intervals } = this.options;
    if (kinds?.length) params.set('kinds', kinds.join(','));
    if (party?.length) params.set('party', party.join(','));
    if (markets?.length) params.set('markets', markets.join(','));
    if (intervals?.length) params.set('intervals', intervals.join(','));
    const session = this.options.client.session;
    if (session) {
      const auth = await session.streamAuth('/v1/stream');
      params.set('user', auth.user);
      params.set('sessionId', auth.sessionId);
      params.set('sig', auth.sig);
    }
    const qs = params.toString();
    return `${base}/v1/stream${qs ? `?${qs}` : ''}`;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.setState('connecting');
    const Ctor = this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketCtor }).WebSocket;
    if (!Ctor) throw new Error('no WebSocket implementation: pass options.WebSocket (e.g. the `ws` package in Node 20)');
    let ws: WebSocketLike;
    try {
      ws = new Ctor(await this.url());
    } catch (err) {
      this.options.onError?.(err);
      this.scheduleReconnect();
      return;
    }
    this.ws = ws;
    // Frames are held from the first moment: a backfill may be needed before any is released.
    this.held = this.last !== null ? [] : null;
    ws.onmessage = (ev) => this.onRaw(ev.data);
    ws.onerror = (ev) => this.options.onError?.(ev);
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.scheduleReconnect();
    };
    ws.onopen = () => {
      if (this.held) void this.backfill(ws);
      else {
        this.attempt = 0;
        this.setState('live');
      }
    };
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    this.setState('waiting');
    const r = this.options.reconnect ?? {};
    const delay = backoffDelay({ baseDelayMs: r.baseDelayMs ?? 500, maxDelayMs: r.maxDelayMs ?? 15_000, random: r.random ?? Math.random }, this.attempt++);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, delay);
  }

  private async backfill(ws: WebSocketLike): Promise<void> {
    this.setState('backfilling');
    try {
      for await (const event of this.options.client.eventsSince(this.last ?? 0)) {
        if (this.ws !== ws) return; // superseded by a newer connection
        if (this.last !== null && event.seq <= this.last) continue;
        this.last = event.seq;
        this.backfilledTo = event.seq;
        this.seenAtLast.clear();
        if (this.wants(event)) this.options.onMessage({ source: 'backfill', event });
      }
    } catch (err) {
      // Without the backfill the live frames would leave a gap: drop this socket and start over.
      this.options.onError?.(err);
      this.held = null;
      if (this.ws === ws) {
        this.ws = null;
        ws.close(4000, 'backfill failed');
        this.scheduleReconnect();
      }
      return;
    }
    if (this.ws !== ws) return;
    const held = this.held ?? [];
    this.held = null;
    for (const frame of held) this.deliver(frame);
    this.attempt = 0;
    this.setState('live');
  }

  private onRaw(data: unknown): void {
    let frame: Frame;
    try {
      frame = JSON.parse(typeof data === 'string' ? data : String(data)) as Frame;
    } catch (err) {
      this.options.onError?.(err);
      return;
    }
    if (this.held) this.held.push(frame);
    else this.deliver(frame);
  }

  private deliver(frame: Frame): void {
    if (frame.kind === 'orderbook.snapshot' || typeof frame.seq !== 'number') {
      this.options.onMessage({ source: 'live', frame });
      return;
    }
    if (frame.seq <= this.backfilledTo) return;
    if (this.last !== null && frame.seq < this.last) return;
    const key = `${frame.kind}|${frame.market ?? ''}|${frame.userParty ?? frame.party ?? ''}|${frame.interval ?? ''}`;
    if (this.last === frame.seq) {
      if (this.seenAtLast.has(key)) return;
    } else {
      this.seenAtLast.clear();
      this.last = frame.seq;
    }
    this.seenAtLast.add(key);
    this.options.onMessage({ source: 'live', frame });
  }

  /** Applies the subscription's filters to a backfilled raw event (see docs/client.md). */
  private wants(event: EngineEvent): boolean {
    const { kinds, party, markets } = this.options;
    if (event.party !== undefined && event.party !== null && !(party ?? []).includes(event.party)) return false;
    if (markets?.length && event.market && !markets.includes(event.market)) return false;
    if (kinds?.length && !kinds.includes(event.kind)) {
      return event.kind === 'engine.order_filled' && kinds.some((k) => DERIVED_FROM_FILLS.has(k));
    }
    return true;
  }
}
