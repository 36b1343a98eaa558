// Client of the gateway's live stream `/v1/stream` (docs/client.md "Live stream").
//
// Reconnect is gapless by the server's replay, REST only beyond it: docs/client.md "Reconnect
// without a gap" is the one description (query(), backfill() and deliver() below implement it).
// `stream.reset` (another engine history) voids every state built from frames: the client tells
// the app (`onReset`) and goes on with the fresh snapshots the gateway sends next.
//
// Failures are values: a refused upgrade is probed with a plain GET of the same URL (browsers hide
// a refused upgrade's status), which the gateway answers with the refusal's status and `{error,
// code}`. 4xx refusals stop the loop (`onRefused`); a clock outside the signature window and an
// expired session are fixed (clock offset from `serverTime`, the session-expiry hook) and tried
// again; 429/5xx/network errors are retried with backoff. A half-open socket (no frame, not even
// `stream.heartbeat`, for two heartbeat periods) is dropped and replaced.
import { BookFrameGate } from './book-gate.js';
import type { FrameKind, Interval, KnownMarket } from './engine-events.js';
import { errorBody, GatewayError } from './errors.js';
import { backoffDelay } from './retry.js';
import type { GatewayClient } from './client.js';
import type { ControlMessage, EngineEvent, Frame, GapMessage, ResetMessage } from './types.js';

/** The part of the WebSocket API the client uses (browser WebSocket and the `ws` package both fit). */
export interface WebSocketLike {
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  close(code?: number, reason?: string): void;
}
export type WebSocketCtor = new (url: string) => WebSocketLike;

export type StreamMessage =
  /** A frame from the socket: replayed, snapshot (`frame.snapshot === true`) or live. */
  | { source: 'live'; frame: Frame }
  /** A raw engine event read from `/v1/events` after a `stream.gap`. */
  | { source: 'backfill'; event: EngineEvent }
  /** `stream.subscribed`, `stream.gap`, `stream.reset`, `stream.heartbeat`. */
  | { source: 'control'; message: ControlMessage };
export type StreamState = 'connecting' | 'backfilling' | 'live' | 'waiting' | 'refused' | 'stopped';

export interface StreamOptions {
  client: GatewayClient;
  /** Frame kinds (a misspelt kind such as 'trades' does not compile). */
  kinds?: FrameKind[];
  /** Parties whose user-scoped frames to receive; the client's session must prove them. */
  party?: string[];
  /**
   * Markets: known literals, or any `string` value read at run time (the escape hatch). **A list
   * naming no market the engine knows is ignored by the gateway and every market is streamed** (the
   * spec's rule 1): `onWarning` is called when that happens (by default `console.warn`), so a
   * misspelt symbol (`btc-perp`) does not silently flood the screen.
   */
  markets?: Array<KnownMarket | (string & {})>;
  /** Called when the gateway ignored the markets filter (it names no market the engine lists); default console.warn. */
  onWarning?: (message: string) => void;
  /** Candle intervals ('2m' does not compile). */
  intervals?: Interval[];
  /** Resume point: the last seq the consumer processed before this client existed. */
  lastSeq?: number | null;
  /** Epoch (engine history) `lastSeq` belongs to, from an earlier `stream.subscribed`. */
  epoch?: string | null;
  /**
   * With `orderbook.delta` in `kinds`: the book view (levels per side 1..1000, default 20; grouping
   * `sig:2`…`sig:5` or `tick:<decimal>`); keep it with DeltaOrderBook (docs/client.md "Order books").
   */
  book?: { depth?: number; group?: string };
  /** Ask for the state on subscribe (snapshot frames); default true. */
  snapshot?: boolean;
  /** Heartbeat period asked of the gateway, in s (1..300, default 15; 0: none, no half-open check). */
  heartbeatS?: number;
  onMessage: (message: StreamMessage) => void;
  onState?: (state: StreamState) => void;
  /** Transient trouble (a failed probe, a malformed frame, a backfill error); the loop goes on. */
  onError?: (error: unknown) => void;
  /** The gateway refused the connection for good (4xx other than 429): the loop has stopped. */
  onRefused?: (error: GatewayError) => void;
  /**
   * The engine history changed (`stream.reset`, or close 4011): discard every state built from
   * frames and bootstrap again (REST); the snapshot frames of the new history follow.
   */
  onReset?: (reset: ResetMessage['payload'] | null) => void;
  WebSocket?: WebSocketCtor;
  reconnect?: { baseDelayMs?: number; maxDelayMs?: number; random?: () => number };
  /** Poll period while waiting for the REST copy to catch up after a gap (ms, default 200). */
  gapPollMs?: number;
}

/** Kinds whose frames all carry a market / all belong to a party (for the REST backfill filters). */
const MARKET_KINDS = new Set(['trade', 'candle.update', 'candle.close', 'orderbook.snapshot', 'position.update']);
const PARTY_KINDS = new Set(['position.update', 'balance.update']);
const DERIVED_FROM_FILLS = new Set(['position.update', 'balance.update', 'trade', 'candle.update', 'candle.close']);

interface Connection {
  ws: WebSocketLike;
  opened: boolean;
  /** Frames held while a REST backfill runs; null when frames are delivered as they come. */
  held: Frame[] | null;
  headSeq: number | null;
  lastMessageAt: number;
  watchdog: ReturnType<typeof setInterval> | null;
  /** Bumped to abandon a running backfill (reset, drop). */
  generation: number;
}

export class StreamClient {
  private conn: Connection | null = null;
  private stopped = true;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Bumped by stop() and every connect(): a connect still signing its query when superseded gives up. */
  private connectToken = 0;
  /** Highest seq the consumer has been given (the resume point). */
  private last: number | null;
  private currentEpoch: string | null;
  /** Frames delivered at seq `last`, per key; and how many of each arrived on this connection. */
  private delivered = new Map<string, number>();
  private arrived = new Map<string, number>();
  /** Highest seq covered by a REST backfill: frames at or below it are already in (as raw events). */
  private restCoveredTo = -1;
  /** Drops book frames older than the book already delivered (a reconnect replays old ones). */
  private readonly books = new BookFrameGate();

  constructor(private readonly options: StreamOptions) {
    this.last = options.lastSeq ?? null;
    this.currentEpoch = options.epoch ?? null;
  }

  get lastSeq(): number | null {
    return this.last;
  }
  get epoch(): string | null {
    return this.currentEpoch;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.attempt = 0;
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.connectToken++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.drop(1000, 'client stop');
    this.setState('stopped');
  }

  /** Closes the current socket as if the network had dropped it (tests, "reconnect now" buttons). */
  reconnectNow(): void {
    if (this.stopped || !this.conn) return;
    this.drop(4000, 'client reconnect');
    this.scheduleReconnect(0);
  }

  private setState(state: StreamState): void {
    this.options.onState?.(state);
  }

  /** Query of the stream URL: filters, control, resume point, heartbeat, and a fresh party proof. */
  private async query(): Promise<URLSearchParams> {
    const params = new URLSearchParams();
    const { kinds, party, markets, intervals, heartbeatS = 15, snapshot = true } = this.options;
    if (kinds?.length) params.set('kinds', kinds.join(','));
    if (party?.length) params.set('party', party.join(','));
    if (markets?.length) params.set('markets', markets.join(','));
    if (intervals?.length) params.set('intervals', intervals.join(','));
    if (this.options.book?.depth !== undefined) params.set('depth', String(this.options.book.depth));
    if (this.options.book?.group !== undefined) params.set('group', this.options.book.group);
    params.set('control', 'true');
    if (this.last !== null) {
      // One below the last seq: frames of that seq that never arrived are replayed too; the ones
      // that did are recognised and dropped (see deliver).
      params.set('since', String(Math.max(0, this.last - 1)));
      if (this.currentEpoch !== null) params.set('epoch', this.currentEpoch);
    }
    if (heartbeatS > 0) params.set('heartbeat', String(heartbeatS));
    if (!snapshot) params.set('snapshot', 'false');
    const session = await this.options.client.transport.currentSession();
    if (session) {
      const auth = await session.streamAuth('/v1/stream');
      params.set('user', auth.user);
      params.set('sessionId', auth.sessionId);
      params.set('sig', auth.sig);
    }
    return params;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const token = ++this.connectToken;
    this.setState('connecting');
    const Ctor = this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketCtor }).WebSocket;
    if (!Ctor) throw new Error('no WebSocket implementation: pass options.WebSocket (e.g. the `ws` package in Node 20)');
    let ws: WebSocketLike;
    try {
      const qs = (await this.query()).toString();
      if (this.stopped || token !== this.connectToken) return;
      ws = new Ctor(`${this.options.client.transport.baseUrl.replace(/^http/, 'ws')}/v1/stream?${qs}`);
    } catch (err) {
      this.options.onError?.(err);
      this.scheduleReconnect();
      return;
    }
    const conn: Connection = { ws, opened: false, held: null, headSeq: null, lastMessageAt: Date.now(), watchdog: null, generation: 0 };
    this.conn = conn;
    this.arrived.clear();
    ws.onmessage = (ev) => {
      if (this.conn !== conn) return;
      conn.lastMessageAt = Date.now();
      this.onRaw(conn, ev.data);
    };
    ws.onerror = () => {}; // the close that follows says what happened
    ws.onclose = (ev) => {
      if (this.conn !== conn) return;
      this.detach(conn);
      if (ev.code === 4011) this.resetState(null);
      if (!conn.opened) void this.probe();
      else this.scheduleReconnect();
    };
    ws.onopen = () => {
      if (this.conn !== conn) return;
      conn.opened = true;
      conn.lastMessageAt = Date.now();
      this.attempt = 0;
      this.setState('live');
      const hb = this.options.heartbeatS ?? 15;
      if (hb > 0) {
        // Two missed heartbeats (plus slack for a busy tab) mean the socket is half-open.
        const limit = hb * 2000 + 1000;
        conn.watchdog = setInterval(() => {
          if (this.conn !== conn || Date.now() - conn.lastMessageAt <= limit) return;
          this.options.onError?.(new Error(`no frame for ${limit} ms: the socket is half-open, reconnecting`));
          this.drop(4000, 'heartbeat timeout');
          this.scheduleReconnect();
        }, Math.min(1000, hb * 500));
      }
    };
  }

  /** Stops listening to a connection (its socket may never report a close if it is half-open). */
  private detach(conn: Connection): void {
    if (conn.watchdog) clearInterval(conn.watchdog);
    conn.watchdog = null;
    conn.generation++;
    if (this.conn === conn) this.conn = null;
  }

  private drop(code: number, reason: string): void {
    const conn = this.conn;
    if (!conn) return;
    this.detach(conn);
    try {
      conn.ws.close(code, reason);
    } catch {
      // already closed
    }
  }

  private scheduleReconnect(delayMs?: number): void {
    if (this.stopped || this.timer) return;
    this.setState('waiting');
    const r = this.options.reconnect ?? {};
    const delay = delayMs ?? backoffDelay({ baseDelayMs: r.baseDelayMs ?? 500, maxDelayMs: r.maxDelayMs ?? 15_000, random: r.random ?? Math.random }, this.attempt++);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, delay);
  }

  /**
   * The socket closed before it opened: ask the gateway why with a plain GET of the same URL
   * (freshly signed: a signature is usable once). 426 means it would be accepted now.
   */
  private async probe(): Promise<void> {
    const transport = this.options.client.transport;
    let status: number;
    let text: string;
    const sentAt = transport.clock.localNow();
    const path = '/v1/stream';
    try {
      const qs = (await this.query()).toString();
      ({ status, text } = await transport.sender({ method: 'GET', url: `${transport.baseUrl}${path}?${qs}`, headers: {}, body: undefined }));
    } catch (err) {
      this.options.onError?.(err);
      this.scheduleReconnect();
      return;
    }
    if (this.stopped) return;
    const body = errorBody(status, text);
    const error = new GatewayError(status, path, body);
    if (status === 401 && typeof body.serverTime === 'number' && this.attempt < 3) {
      transport.clock.learn(body.serverTime, sentAt, transport.clock.localNow());
      this.options.onError?.(error);
      this.scheduleReconnect(0);
      this.attempt++;
      return;
    }
    if (status === 401 && transport.renewSession && transport.session && /session expired|unknown session/.test(body.error) && this.attempt < 3) {
      const before = transport.session;
      const renewed = await transport.currentSession(true).catch(() => null);
      if (renewed && renewed !== before) {
        this.options.onError?.(error);
        this.attempt++;
        this.scheduleReconnect(0);
        return;
      }
    }
    if (status >= 400 && status < 500 && status !== 429 && status !== 426) {
      this.stopped = true;
      this.setState('refused');
      this.options.onRefused?.(error);
      return;
    }
    // 426 (would be accepted: the drop was transient), 429, 5xx, anything else: try again later.
    if (status !== 426) this.options.onError?.(error);
    this.scheduleReconnect();
  }

  private onRaw(conn: Connection, data: unknown): void {
    let message: Frame | ControlMessage;
    try {
      message = JSON.parse(typeof data === 'string' ? data : String(data)) as Frame | ControlMessage;
    } catch (err) {
      this.options.onError?.(err);
      return;
    }
    if (typeof message.kind === 'string' && message.kind.startsWith('stream.')) {
      this.onControl(conn, message as ControlMessage);
      return;
    }
    if (conn.held) conn.held.push(message as Frame);
    else this.deliver(message as Frame);
  }

  private onControl(conn: Connection, message: ControlMessage): void {
    switch (message.kind) {
      case 'stream.subscribed': {
        const p = message.payload as { epoch?: string; headSeq?: number | null; marketsIgnored?: boolean; markets?: string[] | null };
        if (typeof p.epoch === 'string') this.currentEpoch = p.epoch;
        if (p.marketsIgnored === true && this.options.markets?.length) {
          const warn = this.options.onWarning ?? ((m: string) => console.warn(m));
          warn(`@gateway/client: markets=${this.options.markets.join(',')} names no market the engine lists; the gateway streams every market`);
        }
        conn.headSeq = p.headSeq ?? null;
        // A fresh connection starts at the head: a reconnect before any frame resumes from there.
        if (this.last === null && typeof p.headSeq === 'number') this.moveTo(p.headSeq);
        break;
      }
      case 'stream.reset':
        // Frames held before the reset belong to the old history: void, like every state built from them.
        conn.held = null;
        conn.generation++;
        this.resetState(message.payload);
        this.currentEpoch = message.payload.epoch;
        this.moveTo(message.seq);
        this.setState('live');
        break;
      case 'stream.gap':
        conn.held = [];
        void this.backfill(conn, message);
        break;
      case 'stream.heartbeat': {
        const head = message.payload.headSeq;
        conn.headSeq = head;
        // Heartbeats come after the replay and snapshot, in order with the live frames: every frame
        // up to the head has been sent, so the resume point may move there (a quiet filter then
        // resumes from a recent seq instead of falling beyond the replay history).
        if (head !== null && !conn.held && (this.last === null || head > this.last)) this.moveTo(head);
        break;
      }
    }
    this.options.onMessage({ source: 'control', message });
  }

  private resetState(payload: ResetMessage['payload'] | null): void {
    this.last = null;
    this.restCoveredTo = -1;
    this.delivered.clear();
    this.arrived.clear();
    this.books.clear();
    if (payload === null) this.currentEpoch = null;
    this.options.onReset?.(payload);
  }

  private moveTo(seq: number): void {
    this.last = seq;
    this.delivered.clear();
    this.arrived.clear();
  }

  /**
   * After `stream.gap`: the stream will deliver what its history holds, from its oldest seq (or,
   * with an empty history, after the head). REST covers the resume point up to that oldest seq
   * included — a history trimmed frame by frame may hold only some frames of its oldest seq, while
   * the REST event stands for all of them — and the stream's frames at or below it are dropped.
   * The REST copy trails the engine, so first wait until it has the bound, then read, then release
   * the held frames.
   */
  private async backfill(conn: Connection, gap: GapMessage): Promise<void> {
    this.setState('backfilling');
    const generation = conn.generation;
    const current = () => this.conn === conn && conn.generation === generation;
    const from = this.last ?? gap.payload.requestedSince;
    const upTo = gap.payload.oldestAvailableSeq !== null ? gap.payload.oldestAvailableSeq : (conn.headSeq ?? from);
    const client = this.options.client;
    try {
      if (upTo > from) {
        // 1. The REST copy must hold seq `upTo` (seqs are dense: the engine numbers every event).
        for (;;) {
          const probe = await client.listEvents({ since: upTo - 1, limit: 1 });
          if (!current()) return;
          if ((probe.items[0]?.seq ?? -1) >= upTo) break;
          await new Promise((r) => setTimeout(r, this.options.gapPollMs ?? 200));
          if (!current()) return;
        }
        // 2. Read (from, upTo] with the server-side filters the subscription allows.
        for await (const event of client.eventsSince(from, this.restFilters())) {
          if (!current()) return;
          if (event.seq > upTo) break;
          if (this.last !== null && event.seq <= this.last) continue;
          this.moveTo(event.seq);
          if (this.wants(event)) this.options.onMessage({ source: 'backfill', event });
        }
      }
    } catch (err) {
      // Without the backfill the live frames would leave a gap: drop this socket and start over.
      this.options.onError?.(err);
      if (current()) {
        this.drop(4000, 'backfill failed');
        this.scheduleReconnect();
      }
      return;
    }
    if (!current()) return;
    if (this.last === null || upTo > this.last) this.moveTo(upTo);
    this.restCoveredTo = Math.max(this.restCoveredTo, upTo);
    const held = conn.held ?? [];
    conn.held = null;
    for (const frame of held) this.deliver(frame);
    this.setState('live');
  }

  /** `/v1/events` filters equivalent to the subscription (only where they cannot drop a wanted event). */
  private restFilters(): { user?: string; market?: string } {
    const { kinds, party, markets } = this.options;
    const filters: { user?: string; market?: string } = {};
    if (kinds?.length && party?.length === 1 && kinds.every((k) => PARTY_KINDS.has(k))) filters.user = party[0]!;
    if (kinds?.length && markets?.length === 1 && kinds.every((k) => MARKET_KINDS.has(k))) filters.market = markets[0]!;
    return filters;
  }

  private deliver(frame: Frame): void {
    if (!this.books.admit(frame)) return;
    // State frames (snapshots on subscribe, polled books) are current as of their seq, not events:
    // always delivered, never moving the resume point.
    if (frame.snapshot === true || frame.kind === 'orderbook.snapshot' || typeof frame.seq !== 'number') {
      this.options.onMessage({ source: 'live', frame });
      return;
    }
    if (frame.seq <= this.restCoveredTo) return;
    if (this.last !== null && frame.seq < this.last) return;
    if (this.last === null || frame.seq > this.last) this.moveTo(frame.seq);
    // Several frames share a seq (a fill: trade, position and balance per leg, candles). After a
    // resume from `last - 1` the frames of `last` come again: the n-th arrival of a key is new
    // only when fewer than n were delivered.
    const f = frame as { market?: string; userParty?: string; party?: string; interval?: string };
    const key = `${frame.kind}|${f.market ?? ''}|${f.userParty ?? f.party ?? ''}|${f.interval ?? ''}`;
    const n = (this.arrived.get(key) ?? 0) + 1;
    this.arrived.set(key, n);
    if (n <= (this.delivered.get(key) ?? 0)) return;
    this.delivered.set(key, n);
    this.options.onMessage({ source: 'live', frame });
  }

  /** Applies the subscription's filters to a backfilled raw event (see docs/client.md). */
  private wants(event: EngineEvent): boolean {
    const { kinds, party, markets } = this.options;
    if (event.party !== undefined && event.party !== null && !(party ?? []).includes(event.party)) return false;
    if (markets?.length && event.market && !markets.includes(event.market)) return false;
    if (kinds?.length && !(kinds as readonly string[]).includes(event.kind)) {
      return event.kind === 'engine.order_filled' && kinds.some((k) => DERIVED_FROM_FILLS.has(k));
    }
    return true;
  }
}
