// HTTP client for the matching engine: one keep-alive undici pool, bounded timeouts, and a single
// place where transport failures become the gateway's error codes:
//   connection refused / reset      -> 502 engine_unavailable
//   no whole answer within the timeout -> 504 engine_timeout
// The timeout bounds the whole call: waiting for its turn (the fair share), a pooled connection,
// the headers AND the body.
// undici's headersTimeout/bodyTimeout only bound each wait (the gap between two body chunks), so an
// engine trickling a byte every few seconds would hold a call, and its pooled connection, for ever.
import type { IncomingHttpHeaders } from 'node:http';
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { EngineShareExhaustedError, EngineTimeoutError, EngineUnavailableError } from './errors.js';
import { traced, traceHeaders, tracingOn } from '../tracing/index.js';
import { systemClock, type Clock, type ClockTimer } from '../contracts/clock.js';
import { FairShare, type FairTicket, type Flow } from '../fair-share.js';

export interface EngineClientOptions {
  baseUrl: string;
  adminToken: string | null;
  timeoutMs: number;
  connections: number;
  /**
   * The fair share of the pool (fair-share.ts): calls of one client address running at once, and
   * waiting (past it refused: EngineShareExhaustedError). Default: no bound of its own per address
   * (the pool's connections; waiting unbounded), the share still taken in fair order.
   */
  addressInFlight?: number;
  addressQueue?: number;
  clock?: Clock;
}

export interface EngineResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface EngineRequest {
  method: Dispatcher.HttpMethod;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string | null;
  timeoutMs?: number;
  /**
   * Whose call it is, for the fair share of the pool: the client address (grouped as the rate
   * limits group it) and the verified party. Absent: the gateway's own calls (health, order book
   * polls, markets, live reads), which share as one address of their own, GATEWAY_FLOW.
   */
  flow?: Flow;
}

/** The flow of the gateway's own engine calls (no client address can be spelt so). */
export const GATEWAY_FLOW: Flow = { address: 'gateway', party: null };

export interface EngineHealth {
  ok: boolean;
  version?: string;
  buildDate?: string;
  maxSeq?: number;
}

export class EngineClient {
  readonly pool: Pool;
  readonly origin: string;
  readonly basePath: string;
  /** Who gets the pool's connections next (fair-share.ts). */
  readonly share: FairShare;
  private readonly clock: Clock;

  constructor(readonly options: EngineClientOptions) {
    this.clock = options.clock ?? systemClock;
    this.share = new FairShare({
      capacity: options.connections,
      addressInFlight: Math.min(options.addressInFlight ?? options.connections, options.connections),
      addressQueue: options.addressQueue ?? Number.POSITIVE_INFINITY,
      // The gateway's own calls wait as long as they must: none of them is refused for want of room.
      unboundedQueue: [GATEWAY_FLOW.address],
    });
    const url = new URL(options.baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.pool = new Pool(this.origin, {
      connections: options.connections,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connectTimeout: Math.min(options.timeoutMs, 5_000),
    });
  }

  /**
   * Sends one request; answers whatever status the engine gave. Throws EngineUnavailableError or EngineTimeoutError on transport failure.
   *
   * Uses the pool's `dispatch` with a small handler that collects the body into one Buffer, instead
   * of `pool.request`, which builds a Readable stream, its consumers and several promises per call
   * only for the body to be read whole here anyway (the proxy's hot path). Same pool, same
   * timeouts, same errors, same parsed headers.
   */
  request(opts: EngineRequest): Promise<EngineResponse> {
    if (!tracingOn()) return this.send(opts, opts.headers ?? {});
    // A child span of the request being served, with its W3C traceparent added to the headers sent;
    // the caller's headers (the signed ones) and the body go out untouched.
    return traced(
      `engine ${opts.method}`,
      async (span) => {
        const res = await this.send(opts, traceHeaders(opts.headers ?? {}));
        span.set('http.response.status_code', res.status);
        return res;
      },
      { kind: 'client', childOnly: true, attributes: { 'http.request.method': opts.method, 'url.path': opts.path.split('?', 1)[0]!, 'server.address': this.origin } },
    );
  }

  private send(opts: EngineRequest, headers: Record<string, string>): Promise<EngineResponse> {
    const timeout = opts.timeoutMs ?? this.options.timeoutMs;
    return new Promise<EngineResponse>((resolve, reject) => {
      const call = new EngineCall(resolve, reject, timeout, this.clock);
      const dispatch = (): void => {
        try {
          this.pool.dispatch(
            {
              method: opts.method,
              path: this.basePath + opts.path,
              headers,
              body: opts.body ?? null,
              headersTimeout: timeout,
              bodyTimeout: timeout,
            },
            call,
          );
        } catch (err) {
          call.onResponseError(null, err as Error);
        }
      };
      const flow = opts.flow ?? GATEWAY_FLOW;
      const ticket = this.share.submit(flow, dispatch);
      if (ticket === null) {
        call.refuse(new EngineShareExhaustedError(1));
        return;
      }
      call.placed(ticket);
    });
  }

  adminHeaders(): Record<string, string> {
    return this.options.adminToken ? { authorization: `Bearer ${this.options.adminToken}` } : {};
  }

  /** GET and parse JSON; non-2xx answers are thrown as EngineHttpError with the parsed body. */
  async getJson<T>(path: string, opts: { admin?: boolean; timeoutMs?: number } = {}): Promise<T> {
    const res = await this.request({
      method: 'GET',
      path,
      headers: opts.admin ? this.adminHeaders() : {},
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    });
    const parsed = parseJson(res.body);
    if (res.status < 200 || res.status >= 300) throw new EngineHttpError(res.status, parsed);
    if (parsed === undefined) throw new EngineUnavailableError('the engine answered with a body that is not JSON', res.status);
    return parsed as T;
  }

  async health(timeoutMs = 2_000): Promise<EngineHealth> {
    return this.getJson<EngineHealth>('/healthz', { timeoutMs });
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** A non-2xx answer from the engine, with its parsed JSON body when it had one. */
export class EngineHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const code = (body as { code?: unknown } | undefined)?.code;
    super(`engine answered HTTP ${status}${typeof code === 'string' ? ` ${code}` : ''}`);
    this.name = 'EngineHttpError';
  }
  get code(): string | undefined {
    const code = (this.body as { code?: unknown } | undefined)?.code;
    return typeof code === 'string' ? code : undefined;
  }
}

/** An engine answer larger than this is refused (502): no trading answer comes near it. */
export const MAX_ENGINE_BODY_BYTES = 8 * 1024 * 1024;

/**
 * One engine call as an undici dispatch handler (undici's controller-based handler API): status,
 * headers (already parsed by undici: lower-case names, repeated names as arrays) and the body
 * bytes, settled once.
 */
class EngineCall implements Dispatcher.DispatchHandler {
  private status = 0;
  private headers: Record<string, string | string[] | undefined> = {};
  private chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private controller: Dispatcher.DispatchController | null = null;
  /** The whole call's deadline (its turn, queue, headers and body); cleared when the call settles. */
  private readonly deadline: ClockTimer;
  /** Its place in the fair share: cancelled while waiting, done once undici is finished with it. */
  private ticket: FairTicket | null = null;
  /** undici is finished with it (maybe before `placed`: a dispatch that threw at once). */
  private finished = false;

  constructor(
    private readonly resolve: (res: EngineResponse) => void,
    private readonly reject: (err: unknown) => void,
    timeoutMs: number,
    private readonly clock: Clock,
  ) {
    this.deadline = clock.setTimeout(() => this.expire(), timeoutMs);
  }

  /**
   * Past the deadline the caller gets 504 at once. A call still waiting for its turn leaves the
   * fair share; one sent is aborted: undici destroys its connection (a half-read answer cannot be
   * reused), so the pool slot is free again. A request still queued for a connection is aborted
   * the moment it gets one (onRequestStart).
   */
  private expire(): void {
    if (this.settled) return;
    this.settled = true;
    this.chunks = [];
    this.reject(engineTimeoutError());
    this.ticket?.cancel();
    this.controller?.abort(engineTimeoutError());
  }

  /** Refused before it was sent (the address's share is full). */
  refuse(err: Error): void {
    if (!this.settle()) return;
    this.reject(err);
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    this.clock.clearTimeout(this.deadline);
    return true;
  }

  /** Its place in the fair share (it may have started, and even ended, already). */
  placed(ticket: FairTicket): void {
    this.ticket = ticket;
    if (this.finished) ticket.done();
  }

  /** undici is done with the request (answered, failed or aborted): its slot goes to the next call. */
  private over(): void {
    if (this.finished) return;
    this.finished = true;
    this.ticket?.done();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(engineTimeoutError());
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return; // 1xx informational: the final answer follows
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > MAX_ENGINE_BODY_BYTES) {
      this.chunks = [];
      controller.abort(new Error(`engine answer larger than ${MAX_ENGINE_BODY_BYTES} bytes`));
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.over();
    if (!this.settle()) return;
    const { chunks } = this;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.size);
    this.resolve({ status: this.status, headers: this.headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    this.over();
    if (!this.settle()) return;
    this.reject(engineFailure(err));
  }
}

export function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export function engineFailure(err: unknown): EngineUnavailableError | EngineTimeoutError {
  if (err instanceof EngineUnavailableError || err instanceof EngineTimeoutError) return err;
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError
  ) {
    return engineTimeoutError();
  }
  return new EngineUnavailableError('the engine is unreachable');
}

/** The 504 of an engine that did not answer in time (also a shared read's own deadline). */
export function engineTimeoutError(): EngineTimeoutError {
  return new EngineTimeoutError();
}
