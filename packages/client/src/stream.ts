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
import type { FrameKind, Interval, KnownMarket, UnknownMarket } from './engine-events.js';
import { errorBody, GatewayError } from './errors.js';
import { backoffDelay } from './retry.js';
import type { GatewayClient } from './client.js';
import type { SendRequest, SendResult, Sender } from './transport.js';
import type { TriggerCheck, TriggerWouldFire } from './account.js';
import type { AckMessage, AnswerMessage, ErrorMessage } from './generated/wire.js';
import { reconnectRuleOf } from './wire/vocabulary.js';

/** The code this client closes a socket with to reconnect (wire/vocabulary.ts CLOSE_CODES). */
const CLIENT_RECONNECT = 4000;
import type { Answer, ControlMessage, EngineEvent, Frame, GapMessage, OrderAccepted, OrderCancelled, OrderRequest, ResetMessage } from './types.js';

/**
 * A handler the socket calls. Declared as a method (bivariant), so a socket whose handlers take a
 * richer event fits: the `ws` package's `onmessage: (event: WebSocket.MessageEvent) => void` is not
 * assignable to a plain `(ev: { data: unknown }) => void` property under strictFunctionTypes.
 */
type SocketHandler<E> = { bivarianceHack(ev: E): void }['bivarianceHack'];

/** The part of the WebSocket API the client uses (browser WebSocket and the `ws` package both fit). */
export interface WebSocketLike {
  onopen: SocketHandler<unknown> | null;
  /** Sends a text message (subscribe, unsubscribe, orders). */
  send(data: string): void;
  onmessage: SocketHandler<{ data: unknown }> | null;
  onclose: SocketHandler<{ code: number; reason: string }> | null;
  onerror: SocketHandler<unknown> | null;
  close(code?: number, reason?: string): void;
}
/** A WebSocket class: the browser's `WebSocket`, or the `ws` package's `WebSocket` class in Node 20. */
export type WebSocketCtor = new (url: string) => WebSocketLike;

export type StreamMessage =
  /** A frame from the socket: replayed, snapshot (`frame.snapshot === true`) or live. */
  | { source: 'live'; frame: Frame }
  /** A raw engine event read from `/v1/events` after a `stream.gap`. */
  | { source: 'backfill'; event: EngineEvent }
  /** `stream.subscribed`, `stream.gap`, `stream.reset`, `stream.heartbeat`. */
  | { source: 'control'; message: ControlMessage };

/**
 * A market filter as the types judge it: a symbol read at run time (`string`) passes; a literal must
 * be a known market or at least spelt as the engine spells them (upper case), so `'btc-perp'` does
 * not compile (the gateway would ignore a filter that names no market it lists: rule 1).
 */
export type MarketFilter<M extends string> = string extends M ? M : M extends KnownMarket ? M : M extends Uppercase<M> ? M : UnknownMarket<M>;
/** A list of markets that names at least one (an empty list is no filter at all, so it does not compile). */
export type MarketList<M extends string> = readonly [MarketFilter<M>, ...MarketFilter<M>[]];

/** What a subscribe message adds (docs/client.md "Changing a live stream"); a party is proven with the client's session. */
export interface StreamSubscription<M extends string = string> {
  kinds?: FrameKind[];
  markets?: MarketList<M>;
  intervals?: Interval[];
  party?: string[];
  /** With `orderbook.delta`: the connection's book view (levels per side 1..1000; grouping `sig:2`…`sig:5`, `tick:<decimal>` or `none`). */
  book?: { depth?: number; group?: string; throttle?: 0 | 100 | 500 };
  /** false: no snapshot frames for what was added (default: the stream's `snapshot` option). */
  snapshot?: boolean;
}
/** What an unsubscribe message removes. */
export interface StreamUnsubscription {
  kinds?: FrameKind[];
  markets?: string[];
  intervals?: Interval[];
  party?: string[];
}
/** The connection's filters as the gateway applied them (the answer to subscribe / unsubscribe). */
export type AppliedFilters = AckMessage['payload'];
export type StreamState = 'connecting' | 'backfilling' | 'live' | 'waiting' | 'refused' | 'stopped';

export interface StreamOptions<M extends string = string> {
  client: GatewayClient;
  /** Frame kinds (a misspelt kind such as 'trades' does not compile). */
  kinds?: FrameKind[];
  /** Parties whose user-scoped frames to receive; the client's session must prove them. */
  party?: string[];
  /**
   * Markets: at least one; known literals, upper-case symbols, or any `string` value read at run
   * time (the escape hatch). **A list naming no market the engine knows is ignored by the gateway
   * and every market is streamed** (the spec's rule 1): in the types, an empty list or a literal
   * such as `'btc-perp'` does not compile (MarketFilter); at run time `onWarning` is called when the
   * gateway ignored the list (by default `console.warn`), so a misspelt symbol read from
   * elsewhere does not silently flood the screen either.
   */
  markets?: MarketList<M>;
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
  book?: { depth?: number; group?: string; throttle?: 0 | 100 | 500 };
  /** `'deflate'`: ask for permessage-deflate on this connection (docs/stream.md "Compression"). */
  compress?: 'deflate';
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
  /**
   * How long a message (subscribe, unsubscribe, order) waits for its answer, including the wait
   * for the socket to be open (ms, default 10 000). An order whose answer did not come in time may
   * still have reached the engine: reconcile by `clientOrderId`, as after a REST network error.
   */
  requestTimeoutMs?: number;
}

/** The filters of the stream as they stand (the URL of the next connection carries them). */
interface Filters {
  kinds?: readonly FrameKind[] | undefined;
  party?: readonly string[] | undefined;
  markets?: readonly string[] | undefined;
  intervals?: readonly Interval[] | undefined;
  book?: { depth?: number; group?: string; throttle?: 0 | 100 | 500 } | undefined;
}

type Reply = AckMessage | AnswerMessage | ErrorMessage;
interface Pending {
  resolve(reply: Reply): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
  /** The connection the message went out on (null: not sent yet); its drop loses the answer. */
  sentOn: Connection | null;
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

export class StreamClient<const M extends string = string> {
  private conn: Connection | null = null;
  /** The filters: the options', then as every ack left them (a reconnect asks for these). */
  private filters: Filters;
  /** Messages awaiting their answer, by id. */
  private readonly pending = new Map<string, Pending>();
  private nextId = 0;
  /** Resolved when a connection opens (messages sent while none is open wait for it). */
  private openWaiters: Array<() => void> = [];
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

  private readonly options: StreamOptions;

  /**
   * `M` only checks the `markets` literals at compile time (MarketFilter); the class does not
   * depend on it, so a `StreamClient<'BTC-PERP'>` is a `StreamClient`.
   */
  constructor(options: StreamOptions<M>) {
    this.options = options as unknown as StreamOptions;
    this.last = options.lastSeq ?? null;
    this.currentEpoch = options.epoch ?? null;
    this.filters = { kinds: options.kinds, party: options.party, markets: options.markets, intervals: options.intervals, book: options.book };
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
    this.failPending(() => true, 'the stream was stopped before the answer came');
    this.setState('stopped');
  }

  // ---- talking to the socket (docs/client.md "Changing a live stream", "Orders over the socket") ----

  /**
   * Adds to the stream's filters on the open connection (kinds, markets, intervals, parties, the
   * book view): resolves with the filters as the gateway applied them, after which the snapshot
   * frames of what was added and then its live frames arrive through `onMessage`. A reconnect asks
   * for the filters as they now stand. A refusal (an unknown market, a kind that does not exist,
   * a party the session does not prove…) rejects with a GatewayError carrying the gateway's code.
   * Parties are proven with the client's session, as the connection's own party filter is.
   */
  async subscribe<const N extends string>(change: StreamSubscription<N>): Promise<AppliedFilters> {
    const build = async (): Promise<Record<string, unknown>> => {
      const message: Record<string, unknown> = { op: 'subscribe' };
      if (change.kinds) message.kinds = change.kinds;
      if (change.markets) message.markets = change.markets;
      if (change.intervals) message.intervals = change.intervals;
      if (change.book?.depth !== undefined) message.depth = change.book.depth;
      if (change.book?.group !== undefined) message.group = change.book.group;
      if (change.book?.throttle !== undefined) message.throttle = change.book.throttle;
      if (change.snapshot !== undefined) message.snapshot = change.snapshot;
      if (change.party?.length) {
        message.party = change.party;
        const session = await this.options.client.transport.currentSession();
        if (session) Object.assign(message, await session.streamAuth('/v1/stream'));
      }
      return message;
    };
    return this.changeFilters(build, '/v1/stream');
  }

  /** Removes from the stream's filters; resolves with the filters as applied (see subscribe). */
  unsubscribe(change: StreamUnsubscription): Promise<AppliedFilters> {
    const message: Record<string, unknown> = { op: 'unsubscribe' };
    if (change.kinds) message.kinds = change.kinds;
    if (change.markets) message.markets = change.markets;
    if (change.intervals) message.intervals = change.intervals;
    if (change.party) message.party = change.party;
    return this.changeFilters(async () => message, '/v1/stream');
  }

  /**
   * Places an order over the socket: signed exactly as `client.placeOrder` signs it over REST (the
   * same bytes, clock correction and session renewal), verified by the gateway as REST is (the
   * same replay memory and rate limits), answered with the engine's answer (`reason` included
   * when the order ended at once). Refusals reject with the GatewayError REST would raise; a
   * socket that dropped before the answer rejects with a network GatewayError (status 0), as a
   * dropped REST call does: the order may have reached the engine.
   */
  placeOrder<const O extends string>(order: OrderRequest<O>, options: TriggerCheck = {}): Promise<Answer<OrderAccepted> | TriggerWouldFire> {
    return this.options.client.placeOrder(order, { ...options, sender: this.sender });
  }

  /** Cancels an order over the socket (see placeOrder). */
  cancelOrder(orderId: string): Promise<Answer<OrderCancelled>> {
    return this.options.client.cancelOrder(orderId, { sender: this.sender });
  }

  /**
   * The socket as a transport Sender (for `client.placeOrder(order, { sender })` and
   * `client.cancelOrder(id, { sender })`): the signed call goes out as an order message and its
   * answer comes back as the HTTP answer REST would have given.
   */
  readonly sender: Sender = (request) => this.sendSigned(request);

  private async sendSigned({ method, url, headers, body }: SendRequest): Promise<SendResult> {
    const base = this.options.client.transport.baseUrl;
    const target = url.startsWith(base) ? url.slice(base.length) : url;
    let message: Record<string, unknown>;
    if (method === 'POST' && target === '/v1/orders') message = { op: 'order.place', body: body ?? '' };
    else if (method === 'DELETE' && /^\/v1\/orders\/[^/?#]+$/.test(target)) message = { op: 'order.cancel', orderId: decodeURIComponent(target.slice('/v1/orders/'.length)) };
    // The desk's calls (desk.ts): their REST body is the message, each item signed within it.
    else if (method === 'POST' && (target === '/v1/orders/batch' || target === '/v1/orders/replace')) message = { op: target.endsWith('batch') ? 'order.batch' : 'order.replace', ...(JSON.parse(body ?? '{}') as object) };
    else throw new Error(`${method} ${target} is not a call the stream carries (order place, cancel, batch and replace only)`);
    if (headers['x-user'] !== undefined) message.user = headers['x-user'];
    if (headers['x-session-id'] !== undefined) message.sessionId = headers['x-session-id'];
    if (headers['x-session-sig'] !== undefined) message.sig = headers['x-session-sig'];
    const reply = await this.request(async () => message);
    if (reply.kind === 'stream.answer') return { status: reply.payload.status, text: JSON.stringify(reply.payload.body) };
    if (reply.kind === 'stream.error') {
      const { status, ...error } = reply.payload;
      return { status, text: JSON.stringify(error) };
    }
    throw new Error(`unexpected answer ${reply.kind} to an order`);
  }

  /**
   * Sends one op message (e.g. the dead man's switch's `switch.arm`, dead-mans-switch.ts) and
   * resolves with its `stream.answer` payload's body; a `stream.error` rejects with a GatewayError.
   */
  async ask(op: string, fields: Record<string, unknown>): Promise<unknown> {
    const reply = await this.request(async () => ({ op, ...fields }));
    if (reply.kind === 'stream.answer') return reply.payload.body;
    if (reply.kind === 'stream.error') {
      const { status, ...error } = reply.payload;
      throw new GatewayError(status, op, error as { error: string; code: string });
    }
    throw new GatewayError(0, op, { error: `unexpected answer ${reply.kind}`, code: 'bad_response' });
  }

  private async changeFilters(build: () => Promise<Record<string, unknown>>, path: string): Promise<AppliedFilters> {
    let reply: Reply;
    try {
      reply = await this.request(build);
    } catch (err) {
      throw new GatewayError(0, path, { error: (err as Error).message, code: 'network_error' });
    }
    if (reply.kind === 'stream.error') {
      const { status, ...error } = reply.payload;
      throw new GatewayError(status, path, error as { error: string; code: string });
    }
    if (reply.kind !== 'stream.ack') throw new GatewayError(0, path, { error: `unexpected answer ${reply.kind}`, code: 'bad_response' });
    this.applyFilters(reply.payload);
    return reply.payload;
  }

  /** The filters the gateway applied become the stream's (the next connection's URL carries them). */
  private applyFilters(p: AppliedFilters): void {
    // Another book view (or none): its frames count their own bookSeq, not comparable with the
    // book frames delivered before, so the gate starts over (a subscribe replays nothing old).
    if (JSON.stringify(p.book ?? null) !== JSON.stringify(this.filters.book ?? null)) this.books.clear();
    this.filters = {
      kinds: p.kinds === null ? undefined : (p.kinds as FrameKind[]),
      party: p.parties.length > 0 ? p.parties : undefined,
      // Markets the gateway ignored by rule 1 (the URL's): kept as asked, so the warning stays true.
      markets: p.marketsIgnored ? this.filters.markets : (p.markets ?? undefined),
      intervals: p.intervals ?? undefined,
      book: p.book ?? undefined,
    };
  }

  /**
   * Sends a message (built when the socket is open: a party proof is signed then) and resolves
   * with its answer. Waits for an open connection; rejects when none opens, or no answer comes,
   * within requestTimeoutMs, or when the connection it was sent on drops before the answer.
   */
  private request(build: () => Promise<Record<string, unknown>>): Promise<Reply> {
    const id = `c${++this.nextId}`;
    const timeoutMs = this.options.requestTimeoutMs ?? 10_000;
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => this.settle(id, new Error(`no answer from the stream within ${timeoutMs} ms`)), timeoutMs);
      const pending: Pending = { resolve, reject, timer, sentOn: null };
      this.pending.set(id, pending);
      const send = async (): Promise<void> => {
        if (this.pending.get(id) !== pending) return;
        const conn = this.conn;
        if (!conn?.opened) {
          if (this.stopped) return this.settle(id, new Error('the stream is stopped'));
          this.openWaiters.push(() => void send());
          return;
        }
        try {
          const message = await build();
          if (this.pending.get(id) !== pending) return;
          if (this.conn !== conn) return void send(); // dropped while the proof was signed
          conn.ws.send(JSON.stringify({ ...message, id }));
          pending.sentOn = conn;
        } catch (err) {
          this.settle(id, err as Error);
        }
      };
      void send();
    });
  }

  private settle(id: string, outcome: Reply | Error): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    if (outcome instanceof Error) pending.reject(outcome);
    else pending.resolve(outcome);
  }

  private failPending(which: (p: Pending) => boolean, why: string): void {
    for (const [id, p] of [...this.pending]) if (which(p)) this.settle(id, new Error(why));
  }

  /** Closes the current socket as if the network had dropped it (tests, "reconnect now" buttons). */
  reconnectNow(): void {
    if (this.stopped || !this.conn) return;
    this.drop(CLIENT_RECONNECT, 'client reconnect');
    this.scheduleReconnect(0);
  }

  private setState(state: StreamState): void {
    this.options.onState?.(state);
  }

  /** Query of the stream URL: filters, control, resume point, heartbeat, and a fresh party proof. */
  private async query(): Promise<URLSearchParams> {
    const params = new URLSearchParams();
    const { heartbeatS = 15, snapshot = true } = this.options;
    const { kinds, party, markets, intervals, book } = this.filters;
    if (kinds?.length) params.set('kinds', kinds.join(','));
    if (party?.length) params.set('party', party.join(','));
    if (markets?.length) params.set('markets', markets.join(','));
    if (intervals?.length) params.set('intervals', intervals.join(','));
    if (book?.depth !== undefined) params.set('depth', String(book.depth));
    if (book?.group !== undefined) params.set('group', book.group);
    if (book?.throttle) params.set('throttle', String(book.throttle));
    // Opt-in per connection; negotiated only when the WebSocket implementation offers it too (browsers do).
    if (this.options.compress) params.set('compress', 'deflate');
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
      if (reconnectRuleOf(ev.code) === 'reset') this.resetState(null);
      if (!conn.opened) void this.probe();
      else this.scheduleReconnect();
    };
    ws.onopen = () => {
      if (this.conn !== conn) return;
      conn.opened = true;
      conn.lastMessageAt = Date.now();
      this.attempt = 0;
      this.setState('live');
      const waiting = this.openWaiters;
      this.openWaiters = [];
      for (const send of waiting) send();
      const hb = this.options.heartbeatS ?? 15;
      if (hb > 0) {
        // Two missed heartbeats (plus slack for a busy tab) mean the socket is half-open.
        const limit = hb * 2000 + 1000;
        conn.watchdog = setInterval(() => {
          if (this.conn !== conn || Date.now() - conn.lastMessageAt <= limit) return;
          this.options.onError?.(new Error(`no frame for ${limit} ms: the socket is half-open, reconnecting`));
          this.drop(CLIENT_RECONNECT, 'heartbeat timeout');
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
    this.failPending((p) => p.sentOn === conn, 'the stream connection dropped before the answer came');
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
    const kind: string = message.kind;
    if (kind === 'stream.ack' || kind === 'stream.answer' || kind === 'stream.error') {
      const reply = message as unknown as Reply;
      if (typeof reply.id === 'string' && this.pending.has(reply.id)) this.settle(reply.id, reply);
      else if (reply.kind === 'stream.error') this.options.onError?.(new GatewayError(reply.payload.status, '/v1/stream', reply.payload as { error: string }));
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
        if (p.marketsIgnored === true && this.filters.markets?.length) {
          const warn = this.options.onWarning ?? ((m: string) => console.warn(m));
          warn(`@gateway/client: markets=${this.filters.markets.join(',')} names no market the engine lists; the gateway streams every market`);
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
        this.drop(CLIENT_RECONNECT, 'backfill failed');
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
    const { kinds, party, markets } = this.filters;
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
    const { kinds, party, markets } = this.filters;
    if (event.party !== undefined && event.party !== null && !(party ?? []).includes(event.party)) return false;
    if (markets?.length && event.market && !markets.includes(event.market)) return false;
    if (kinds?.length && !(kinds as readonly string[]).includes(event.kind)) {
      return event.kind === 'engine.order_filled' && kinds.some((k) => DERIVED_FROM_FILLS.has(k));
    }
    return true;
  }
}
