// One request path for every call: target building, signing (fresh timestamp and signature per
// attempt, since the engine refuses a replayed signature), retries of network errors and 5xx,
// and the docs/client.md error. The network is a pluggable `Sender`: `fetch` by default, `node:http` in
// the Node entry for the one route that needs a GET body.
import { errorBody, GatewayError } from './errors.js';
import { backoffDelay, defaultRetry, isRetryableStatus, type RetryPolicy } from './retry.js';
import { Clock } from './clock.js';
import type { Session } from './signing.js';
import type { PageScan } from './verify/page-scan.js';

/** Query values: strings, numbers, booleans, or lists (sent comma-separated); null/undefined are left out. */
export type Query = object;

export interface SendRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}
export interface SendResult {
  status: number;
  text: string;
  /** The body's bytes, when the sender has them (`fetchSender` does): `text` is their UTF-8 decoding. */
  bytes?: Uint8Array;
  /**
   * The scan of a page of proofs (its parts and leaves, as scanPage gives them) when the sender made
   * it already (the verification worker, ADR 0385, ADR 0386); null: the page is not scannable.
   */
  scan?: PageScan | null;
}
export type Sender = (request: SendRequest) => Promise<SendResult>;

export const fetchSender =
  (fetchImpl: typeof fetch = globalThis.fetch): Sender =>
  async ({ method, url, headers, body }) => {
    const res = await fetchImpl(url, { method, headers, body: body ?? null });
    // The bytes, for the calls that want them (a page of proofs, ADR 0370, callBytes); the text is
    // decoded from them as res.text() would (UTF-8, malformed sequences replaced), once, if asked.
    return bytesResult(res.status, new Uint8Array(await res.arrayBuffer()));
  };

const utf8 = new TextDecoder();
const utf8Encoder = new TextEncoder();

/** A result of `bytes`, its text decoded from them (as res.text() would) once, if asked. */
export function bytesResult(status: number, bytes: Uint8Array, scan?: PageScan | null): SendResult {
  let text: string | undefined;
  return {
    status,
    bytes,
    ...(scan !== undefined ? { scan } : {}),
    get text() {
      return (text ??= utf8.decode(bytes));
    },
  };
}

export interface CallOptions {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Query;
  body?: unknown;
  /** Sign with the session when one is set (party routes and trading). */
  signed?: boolean;
  /** Override the retry count for this call (e.g. 0 for a non-idempotent write). */
  retries?: number;
  sender?: Sender;
  /** Sign as this method instead of `method` (POST /v1/user/me carries the signed GET, docs/client.md). */
  signAs?: 'GET';
}

/** An answer as bytes (callBytes), with the sender's scan of them when it made one. */
export interface BytesAnswer {
  bytes: Uint8Array;
  scan?: PageScan | null;
}

export function buildTarget(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      if (value.length > 0) params.append(name, value.join(','));
    } else params.append(name, String(value as string | number | boolean));
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

/** Called when the session has expired (or the gateway says so): answer a new one, or null. */
export type SessionRenewer = (expired: Session) => Promise<Session | null>;

/** How many parties' sessions a transport remembers besides the current one (the oldest is forgotten). */
const KNOWN_PARTIES = 32;

/** The party of a `/v1/users/:party/...` target, or null for any other route. */
function partyOfTarget(target: string): string | null {
  const match = /^\/v1\/users\/([^/?]+)/.exec(target);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return null;
  }
}

export class Transport {
  private current: Session | null = null;
  /**
   * The last session of each party this transport signed for. A screen that switches party while a
   * read of the previous one is on its way (a verification's pages, a refresh) still signs that read
   * as its own party, which the gateway accepts, rather than with the new party's session, which it
   * refuses 403 for another party's route.
   */
  private readonly known = new Map<string, Session>();
  renewSession: SessionRenewer | null = null;
  private renewing: Promise<Session | null> | null = null;

  /** The session that signs calls (a party route of another party whose session is still known signs with that one). */
  get session(): Session | null {
    return this.current;
  }
  set session(session: Session | null) {
    this.current = session;
    if (!session) return;
    this.known.delete(session.party);
    this.known.set(session.party, session);
    if (this.known.size > KNOWN_PARTIES) this.known.delete(this.known.keys().next().value!);
  }

  constructor(
    readonly baseUrl: string,
    readonly retry: RetryPolicy = defaultRetry,
    readonly sender: Sender = fetchSender(),
    readonly clock: Clock = new Clock(),
  ) {}

  /**
   * The session to sign with: when it has expired (by the corrected clock) and a renewer is set,
   * the renewer runs once (concurrent callers share it) and its session replaces the old one.
   */
  async currentSession(force = false): Promise<Session | null> {
    const session = this.session;
    if (!session || !this.renewSession || (!force && !session.expired)) return session;
    this.renewing ??= this.renewSession(session).finally(() => (this.renewing = null));
    const next = await this.renewing;
    if (next) this.session = next;
    return this.session;
  }

  /** The session for `target`: the party's own unexpired session on its routes, else the current one. */
  private async sessionFor(target: string): Promise<Session | null> {
    const current = await this.currentSession();
    const party = partyOfTarget(target);
    if (!current || party === null || party === current.party) return current;
    const own = this.known.get(party);
    return own && !own.expired ? own : current;
  }

  /** The answer, parsed as JSON (a body that is not JSON: GatewayError `bad_response`). */
  async call<T>(options: CallOptions): Promise<T> {
    const { result, target } = await this.exchange(options);
    try {
      return JSON.parse(result.text) as T;
    } catch {
      throw new GatewayError(result.status, target, { error: 'the gateway answered a body that is not JSON', code: 'bad_response' });
    }
  }

  /**
   * The answer's bytes, unparsed, as the sender read them (a page of proofs: verifyHistory parses it
   * a proof at a time, ADR 0386), with the sender's scan of them when it made one.
   */
  async callBytes(options: CallOptions): Promise<BytesAnswer> {
    const { result } = await this.exchange(options);
    // A sender that gives no bytes (one of a test's, say): its text's.
    const bytes = result.bytes ?? utf8Encoder.encode(result.text);
    return { bytes, ...(result.bytes && result.scan !== undefined ? { scan: result.scan } : {}) };
  }

  /** The request made, signed and retried as the options say, until a 2xx (returned) or an error (thrown). */
  private async exchange(options: CallOptions): Promise<{ result: SendResult; target: string }> {
    const target = buildTarget(options.path, options.query);
    const body = options.body === undefined ? '' : JSON.stringify(options.body);
    const send = options.sender ?? this.sender;
    const retries = options.retries ?? this.retry.retries;
    // One extra signed attempt each for a corrected clock and a renewed session: both are 401s
    // that asking again (signed afresh) does fix.
    let skewRetry = true;
    let renewRetry = true;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = {};
      if (body) headers['content-type'] = 'application/json';
      const session = options.signed ? await this.sessionFor(target) : null;
      if (session) Object.assign(headers, await session.headers(options.signAs ?? options.method, target, body));
      const sentAt = this.clock.localNow();
      let result: SendResult;
      try {
        result = await send({ method: options.method, url: this.baseUrl + target, headers, body: body || undefined });
      } catch (err) {
        result = { status: 0, text: JSON.stringify({ error: `network error: ${(err as Error).message}`, code: 'network_error' }) };
      }
      if (result.status >= 200 && result.status < 300) return { result, target };
      if (result.status === 401 && session) {
        const error = errorBody(result.status, result.text);
        if (skewRetry && typeof error.serverTime === 'number') {
          skewRetry = false;
          this.clock.learn(error.serverTime, sentAt, this.clock.localNow());
          attempt--;
          continue;
        }
        if (renewRetry && this.renewSession && session === this.session && /session expired|unknown session/.test(error.error)) {
          renewRetry = false;
          const renewed = await this.currentSession(true);
          if (renewed && renewed !== session) {
            attempt--;
            continue;
          }
        }
      }
      if (isRetryableStatus(result.status) && attempt < retries) {
        await this.retry.sleep(backoffDelay(this.retry, attempt));
        continue;
      }
      throw new GatewayError(result.status, target, errorBody(result.status, result.text));
    }
  }
}
