// The HTTP upgrade of /v1/stream: validation, connection limits and party proof happen before the
// WebSocket handshake, so a refused client gets a plain HTTP status with a JSON `{error, code}` body.
// A plain GET of /v1/stream runs the very same checks (StreamGate) so a browser, which cannot see
// the status of a refused upgrade, can ask why it was refused.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { provenParty } from '../auth/signed-request.js';
import type { SessionKeys } from '../auth/session-keys.js';
import type { Config } from '../config/env.js';
import type { ReplayGuard } from '../contracts/replay-guard.js';
import type { StreamFanout } from '../stream/fanout.js';
import type { ClientMessageHandlers } from '../stream/hub.js';
import type { StreamMetrics } from '../stream/metrics.js';
import { parseSubscription, type Subscription } from '../stream/subscription.js';
import type { BookViewSpec } from '../stream/book-views.js';
import { ApiError, fromDomainError } from './errors.js';
import { allowedOrigin, writeRawError } from './raw-error.js';
import { connectionBudget, type ConnectionBudget } from './connection-limits.js';
import { addressGroup, clientIp, trustFunction, type TrustFunction } from '../client-address.js';
import { snapshotReads } from '../stream/user-snapshot.js';
import type { WorkBudgets } from './work-budgets.js';
import { systemClock, type Clock } from '../contracts/clock.js';
import { TokenBucket, type AddressInbound } from '../stream/inbound-limit.js';
import { readingAs } from '../db/read-share.js';

export const STREAM_PATH = '/v1/stream';
/** How long a deflate upgrade refused for the address's compression bombs (ADR 0311) or its deflate streams (ADR 0366) waits for its answer. */
export const DEFLATE_REFUSAL_DELAY_MS = 1_000;
/** How long an address closed for its message rate (WS_ADDRESS_MESSAGES_PER_S) has its upgrades refused (ADR 0350). */
export const FLOOD_REFUSAL_MS = 10_000;

export interface UpgradeContext {
  deps: { config: Config; sessions: SessionKeys; replays: ReplayGuard; logger: FastifyBaseLogger };
  hub: StreamFanout;
  knownMarkets: () => ReadonlySet<string> | null;
  /** Refuses a book view past the bound on distinct `tick:` groupings (stream/tick-groupings.ts); absent: no bound. */
  admitBookView?: (spec: BookViewSpec | null) => void;
  metrics: StreamMetrics;
  /** What the open-file limit leaves (connection-limits.ts); default: this process's, from its config. */
  budget?: ConnectionBudget;
  /** The handlers of an accepted connection's messages (stream-messages.ts), from its upgrade request. */
  messages?: (req: IncomingMessage) => ClientMessageHandlers;
  /** Per-address budgets of the work a proof or a snapshot makes (work-budgets.ts). */
  budgets: WorkBudgets;
  /** The windows of WS_DEFLATE_OVERSIZE_PER_IP (default: the system's clock). */
  clock?: Clock;
}

/**
 * Proves the parties asked for, by the URL or a subscribe message alike: with auth, only the one
 * party the proof (`user`, `sessionId`, `sig` over "GET\n/v1/stream\n<tsMs>\n", single-use) proves.
 */
export async function proveParties(
  parties: Iterable<string>,
  proof: { user: string; sessionId: string; sig: string } | null,
  deps: Pick<UpgradeContext['deps'], 'config' | 'sessions' | 'replays'>,
  /** Charged before the proof's session is read from the database (SESSION_LOOKUPS_PER_IP). */
  beforeLookup?: () => Promise<void>,
): Promise<void> {
  const asked = [...parties];
  if (deps.config.authDisabled || asked.length === 0) return;
  if (!proof) {
    throw new ApiError('unauthorized', 'a "party" filter needs proof: user, sessionId, sig (<tsMs>.<hex> over "GET\\n/v1/stream\\n<tsMs>\\n")');
  }
  const proven = await provenParty(deps.sessions, deps.replays, { method: 'GET', target: STREAM_PATH, body: '', headers: proof, ...(beforeLookup ? { beforeLookup } : {}) });
  for (const p of asked) {
    if (p !== proven) throw new ApiError('forbidden', `party ${p} is not the party this connection proved (${proven})`);
  }
}

async function authorize(sub: Subscription, ctx: UpgradeContext, address: string): Promise<void> {
  await proveParties(sub.parties, sub.proof, ctx.deps, () => ctx.budgets.spend('session_lookups', address));
}

/** The admission checks of a stream connection, shared by the upgrade and the plain GET. */
export class StreamGate {
  /** Open streams per client address group (src/client-address.ts). */
  private readonly perAddress = new Map<string, number>();
  /**
   * Deflate connections of an address closed for a message inflating past the bound, in the
   * current window (WS_DEFLATE_OVERSIZE_PER_IP per RATE_LIMIT_WINDOW_MS; ADR 0311).
   */
  private readonly oversize = new Map<string, { count: number; endsAt: number }>();
  /** The message bucket of each address with open streams (WS_ADDRESS_MESSAGES_PER_S; ADR 0350), dropped with its last stream. */
  private readonly messageRates = new Map<string, AddressInbound>();
  /** Deflate streams open per address (WS_DEFLATE_CONNECTIONS_PER_IP; ADR 0366). */
  private readonly deflates = new Map<string, number>();
  /** Addresses closed for their message rate: until when their upgrades are refused. */
  private readonly floods = new Map<string, number>();
  private readonly trust: TrustFunction | null;
  /** Streams open at once: WS_MAX_CONNECTIONS, lowered to what the file limit leaves (FD_HEADROOM). */
  readonly limit: number;
  private readonly full: string;

  constructor(private readonly ctx: UpgradeContext) {
    this.trust = trustFunction(ctx.deps.config.trustProxy);
    const budget = ctx.budget ?? connectionBudget(ctx.deps.config);
    this.limit = budget.streams;
    this.full =
      budget.streams < ctx.deps.config.wsMaxConnections
        ? `the stream holds its maximum of ${budget.streams} connections (the process's file limit ${budget.fileLimit} less FD_HEADROOM ${budget.headroom}); retry later`
        : `the stream holds its maximum of ${budget.streams} connections; retry later`;
  }

  /**
   * The key a connection is counted under, for the upgrade and the plain GET alike: the client as
   * the rate limits see it (`request.ip`: the forwarded client behind a trusted proxy), IPv6 by /64.
   */
  addressOf(req: IncomingMessage): string {
    return addressGroup(clientIp(req, this.trust));
  }

  /** Shutdown, the global cap and the per-address cap; null when a connection may open now. */
  unavailable(address: string): ApiError | null {
    const { config } = this.ctx.deps;
    if (this.ctx.hub.isClosed) return new ApiError('shutting_down', 'the gateway is shutting down');
    if (this.ctx.hub.size >= this.limit) return new ApiError('too_many_connections', this.full);
    const perAddressCap = config.wsMaxConnectionsPerIp; // 0: no per-address cap
    if (perAddressCap > 0 && (this.perAddress.get(address) ?? 0) >= perAddressCap) {
      return new ApiError(
        'too_many_connections',
        `this client address holds its maximum of ${config.wsMaxConnectionsPerIp} stream connections (WS_MAX_CONNECTIONS_PER_IP)`,
        {},
        429,
      );
    }
    return null;
  }

  /**
   * Every check before the handshake, in order: limits, query, party proof (its session lookup
   * charged to the address), the snapshot's reads charged to the address (an upgrade only: the
   * plain GET reads nothing), limits again (the proof may read the database, and shutdown or other
   * upgrades may have happened meanwhile). Throws the ApiError a refused upgrade answers.
   */
  async admit(url: URL, address: string, options: { upgrade?: boolean } = {}): Promise<Subscription> {
    const before = this.unavailable(address);
    if (before) throw before;
    const sub = parseSubscription(url.searchParams, this.ctx.knownMarkets());
    this.ctx.admitBookView?.(sub.book);
    try {
      await authorize(sub, this.ctx, address);
      if (options.upgrade) await this.ctx.budgets.spend('snapshot_reads', address, snapshotReads(sub, sub.snapshot));
    } catch (err) {
      const known = fromDomainError(err);
      if (known) throw known;
      this.ctx.deps.logger.warn({ err }, 'stream upgrade: session check failed');
      throw new ApiError('database_unavailable', 'could not check the session');
    }
    const after = this.unavailable(address);
    if (after) throw after;
    return sub;
  }

  /**
   * A deflate connection of `address` was closed for a compressed message inflating past
   * WS_CLIENT_MESSAGE_MAX_BYTES. Each cost the zlib pool, shared by every deflate connection, a
   * bound's worth of inflating, and the handshake and zlib streams of a new connection: an address
   * reconnecting to send one more (bench:isolation: 250 a second from one address) spent most of a
   * core. Past WS_DEFLATE_OVERSIZE_PER_IP in a window, its deflate upgrades are refused.
   */
  tooLarge(address: string): void {
    const now = (this.ctx.clock ?? systemClock).now();
    const w = this.oversize.get(address);
    if (!w || w.endsAt <= now) {
      if (this.oversize.size >= 10_000) for (const [k, v] of this.oversize) if (v.endsAt <= now) this.oversize.delete(k);
      this.oversize.set(address, { count: 1, endsAt: now + this.ctx.deps.config.rateLimitWindowMs });
    } else w.count++;
  }

  /** The refusal of a deflate upgrade from an address past WS_DEFLATE_OVERSIZE_PER_IP in this window; null: it may open. */
  deflateRefused(address: string): ApiError | null {
    const max = this.ctx.deps.config.wsDeflateOversizePerIp;
    const w = this.oversize.get(address);
    if (max === 0 || !w) return null;
    const now = (this.ctx.clock ?? systemClock).now();
    if (w.endsAt <= now || w.count < max) return null;
    const retryAfterS = Math.max(1, Math.ceil((w.endsAt - now) / 1000));
    return new ApiError(
      'budget_exhausted',
      `this client address sent ${w.count} compressed messages inflating past ${this.ctx.deps.config.wsClientMessageMaxBytes} bytes in this window (WS_DEFLATE_OVERSIZE_PER_IP); compressed connections are refused for ${retryAfterS} s, plain ones are not`,
      { budget: 'deflate_oversize', retryAfterS },
    );
  }

  /**
   * Whether an upgrade would be a deflate connection (counted against WS_DEFLATE_CONNECTIONS_PER_IP):
   * it asks `compress=deflate`, the gateway negotiates it (WS_DEFLATE), and the client offers the
   * extension (an upgrade; the plain GET, which offers nothing, is judged as if it did).
   */
  wantsDeflate(url: URL, req: IncomingMessage | null): boolean {
    if (!this.ctx.deps.config.wsDeflate || url.searchParams.get('compress') !== 'deflate') return false;
    if (req === null) return true;
    const offer = req.headers['sec-websocket-extensions'];
    return typeof offer === 'string' && offer.includes('permessage-deflate');
  }

  /**
   * The refusal of one more deflate connection of `address`, which holds WS_DEFLATE_CONNECTIONS_PER_IP
   * already; null: it may open. What a deflate connection still costs of its own (its opening's
   * frames compressed for it, the inflate state of a client that sends compressed messages) is
   * bounded per address by this (ADR 0366; the live frames are compressed once for all, ADR 0367).
   */
  deflateFull(address: string): ApiError | null {
    const max = this.ctx.deps.config.wsDeflateConnectionsPerIp;
    if (max === 0 || (this.deflates.get(address) ?? 0) < max) return null;
    return new ApiError(
      'budget_exhausted',
      `this client address holds its maximum of ${max} compressed stream connections (WS_DEFLATE_CONNECTIONS_PER_IP); plain connections are accepted`,
      { budget: 'deflate_connections', retryAfterS: 1 },
    );
  }

  /**
   * An address whose connections sent past WS_ADDRESS_MESSAGES_PER_S together: its upgrades are
   * refused for FLOOD_REFUSAL_MS, so closing its connections is not answered by as many new ones.
   */
  flooded(address: string): void {
    const now = (this.ctx.clock ?? systemClock).now();
    if (this.floods.size >= 10_000) for (const [k, until] of this.floods) if (until <= now) this.floods.delete(k);
    this.floods.set(address, now + FLOOD_REFUSAL_MS);
  }

  /** The refusal of an upgrade from an address closed for its message rate a moment ago; null: it may open. */
  floodRefused(address: string): ApiError | null {
    const until = this.floods.get(address);
    if (until === undefined) return null;
    const now = (this.ctx.clock ?? systemClock).now();
    if (until <= now) {
      this.floods.delete(address);
      return null;
    }
    const retryAfterS = Math.max(1, Math.ceil((until - now) / 1000));
    return new ApiError(
      'budget_exhausted',
      `the stream connections of this client address sent more than ${this.ctx.deps.config.wsAddressMessagesPerS} messages a second together (WS_ADDRESS_MESSAGES_PER_S); its connections are refused for ${retryAfterS} s`,
      { budget: 'message_rate', retryAfterS },
    );
  }

  /**
   * What an upgrade of `address` is refused for the address's own conduct: its streams closed a
   * moment ago for their message rate (ADR 0350), its compression bombs (ADR 0311), its deflate
   * streams (ADR 0366); null: none. The upgrade answers it after DEFLATE_REFUSAL_DELAY_MS, the plain
   * GET of the same URL at once (`req` null: judged as an upgrade that offers the extension).
   */
  conductRefused(url: URL, address: string, req: IncomingMessage | null): ApiError | null {
    return (
      this.floodRefused(address) ??
      (url.searchParams.get('compress') === 'deflate' ? this.deflateRefused(address) : null) ??
      (this.wantsDeflate(url, req) ? this.deflateFull(address) : null)
    );
  }

  /** The message bound shared by the address's streams (null: none configured); counted with them by `opened`. */
  addressInbound(address: string): AddressInbound | null {
    const rate = this.ctx.deps.config.wsAddressMessagesPerS;
    if (rate === 0) return null;
    let a = this.messageRates.get(address);
    if (!a) {
      a = { bucket: new TokenBucket(rate, 2 * rate), flooded: () => this.flooded(address) };
      this.messageRates.set(address, a);
    }
    return a;
  }

  /**
   * Counts an accepted stream under its address until its socket closes (without a per-address cap
   * or rate, nothing to count), and a deflate one among the address's deflate streams.
   */
  opened(address: string, socket: Duplex, deflate = false): void {
    const { config } = this.ctx.deps;
    const all = config.wsMaxConnectionsPerIp > 0 || config.wsAddressMessagesPerS > 0;
    const compressed = deflate && config.wsDeflateConnectionsPerIp > 0;
    if (!all && !compressed) return;
    if (all) this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    if (compressed) this.deflates.set(address, (this.deflates.get(address) ?? 0) + 1);
    const counted = socket as Counted;
    counted[COUNTED] = this;
    counted[ADDRESS] = address;
    counted[KINDS] = (all ? ALL : 0) | (compressed ? DEFLATE : 0);
    socket.on('close', uncount);
  }

  /** A counted stream's socket closed (`kinds`: what it was counted as, ALL and DEFLATE). */
  closed(address: string, kinds = ALL): void {
    if (kinds & ALL) {
      const n = (this.perAddress.get(address) ?? 1) - 1;
      if (n <= 0) {
        this.perAddress.delete(address);
        this.messageRates.delete(address);
      } else this.perAddress.set(address, n);
    }
    if (kinds & DEFLATE) {
      const d = (this.deflates.get(address) ?? 1) - 1;
      if (d <= 0) this.deflates.delete(address);
      else this.deflates.set(address, d);
    }
  }
}

// A counted socket carries its gate and address; its close listener is one function for all. A
// closure per socket (with `once`'s wrapper) kept some 200 bytes on every idle connection.
const COUNTED = Symbol('counted by');
const ADDRESS = Symbol('counted under');
const KINDS = Symbol('counted as');
/** Counted among the address's streams (its cap, its message rate). */
const ALL = 1;
/** Counted among the address's deflate streams. */
const DEFLATE = 2;
type Counted = Duplex & { [COUNTED]?: StreamGate; [ADDRESS]?: string; [KINDS]?: number };

function uncount(this: Counted): void {
  const gate = this[COUNTED];
  if (gate === undefined) return;
  this[COUNTED] = undefined;
  gate.closed(this[ADDRESS]!, this[KINDS] ?? ALL);
}

function destroySocket(this: Duplex): void {
  this.destroy();
}

export function createUpgradeHandler(
  ctx: UpgradeContext,
  gate = new StreamGate(ctx),
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    // A function of the module, not a closure of this scope: a closure would keep everything the
    // scope holds (the request and its headers, the head buffer) for as long as the socket lives.
    socket.on('error', destroySocket);
    const origin = allowedOrigin(ctx.deps.config.corsOrigins, typeof req.headers.origin === 'string' ? req.headers.origin : undefined);
    const refuse = (e: ApiError): void => {
      ctx.metrics.rejected.inc({ status: String(e.status) });
      // The body carries the error's extra fields (serverTime of a proof outside the time window).
      const retryAfterS = e.extra.retryAfterS;
      writeRawError(socket, e.status, e.code, e.message, origin, typeof retryAfterS === 'number' ? { 'Retry-After': String(retryAfterS) } : {}, e.extra);
    };
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://gateway.invalid');
    } catch {
      return refuse(new ApiError('bad_request', 'malformed request URL'));
    }
    if (url.pathname !== STREAM_PATH) return refuse(new ApiError('not_found', `no WebSocket route ${url.pathname}`));
    const address = gate.addressOf(req);
    // Synchronous refusals (limits, query) are answered before any await.
    const early = gate.unavailable(address);
    if (early) return refuse(early);
    const deflate = gate.wantsDeflate(url, req);
    const bomber = gate.conductRefused(url, address, req);
    if (bomber) {
      // Answered after a second, not at once: a client that reconnects the moment it is refused
      // (bench:isolation's bomber, on each of its 100 sockets) would otherwise make the gateway
      // accept and refuse thousands of upgrades a second; held, its sockets count against
      // HTTP_MAX_CONNECTIONS_PER_IP meanwhile. The same for an address past its deflate streams
      // (WS_DEFLATE_CONNECTIONS_PER_IP): the bomber's 100 sockets met that bound first.
      setTimeout(refuse, DEFLATE_REFUSAL_DELAY_MS, bomber).unref();
      return;
    }
    // Its proofs' session lookups and its snapshot's reads take the address's turn of the database pool.
    readingAs({ address, party: null }, () => gate.admit(url, address, { upgrade: true })).then(
      (sub) => {
        if (socket.destroyed) return;
        // Checked again in this very step, synchronously with the accept: upgrades whose proofs
        // were checked at the same time must not pass the limits together.
        const late = gate.unavailable(address) ?? (deflate ? gate.deflateFull(address) : null);
        if (late) return refuse(late);
        try {
          gate.opened(address, socket, deflate);
          ctx.hub.accept(req, socket, head, sub, ctx.messages?.(req), sub.compress ? () => gate.tooLarge(address) : undefined, gate.addressInbound(address));
        } catch (err) {
          ctx.deps.logger.warn({ err }, 'stream upgrade: hand-over failed');
          socket.destroy(); // the handshake may have begun: no HTTP answer can follow; the client retries
        }
      },
      (err: unknown) => refuse(fromDomainError(err) ?? new ApiError('internal_error', 'stream upgrade failed')),
    );
  };
}
