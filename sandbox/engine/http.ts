/**
 * HTTP routes of the reference engine on node:http (no framework: the hot path is one JSON parse,
 * one ed25519 verify and one JSON answer).
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EngineCore } from './core.js';
import type { SseHub } from './sse.js';
import { BadRequest } from './types.js';

export interface HttpSettings {
  adminToken: string;
  heartbeatMs: number;
  /** Signed requests per second per X-User (0 = unlimited). */
  rateLimitPerSec: number;
  maxBodyBytes: number;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function fail(res: ServerResponse, status: number, code: string, error: string): void {
  sendJson(res, status, { ok: false, code, error });
}

const BAD_GATEWAY_HTML =
  '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>engine</center></body></html>\n';

/** X-User sent more than once, or one value holding a comma (a duplicated party hint). */
function duplicatedUser(req: IncomingMessage): boolean {
  const raw = req.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 6 && name.toLowerCase() === 'x-user') {
      count++;
      if (count > 1 || raw[i + 1]!.includes(',')) return true;
    }
  }
  return false;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new BadRequest('missing JSON body');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadRequest('malformed JSON');
  }
}

class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly perSec: number) {}
  take(key: string, now: number): boolean {
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.perSec, at: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.perSec, b.tokens + ((now - b.at) / 1000) * this.perSec);
    b.at = now;
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}

export function createHandler(
  core: EngineCore,
  sse: SseHub,
  settings: HttpSettings,
  verifier?: (publicKeyHex: string, message: Buffer, sigHex: string) => Promise<boolean>,
): (req: IncomingMessage, res: ServerResponse) => void {
  const tokenBuf = Buffer.from(`Bearer ${settings.adminToken}`);
  const limiter = settings.rateLimitPerSec > 0 ? new TokenBuckets(settings.rateLimitPerSec) : null;

  const isAdmin = (req: IncomingMessage): boolean => {
    const h = header(req, 'authorization');
    if (!h) return false;
    const b = Buffer.from(h);
    return b.length === tokenBuf.length && timingSafeEqual(b, tokenBuf);
  };

  /** Runs the signed-request checks; answers the failure itself and returns null on failure. */
  const authenticate = async (req: IncomingMessage, res: ServerResponse, body: Buffer, onExpired?: () => unknown): Promise<string | null> => {
    const user = header(req, 'x-user');
    if (limiter && user && !limiter.take(user, core.now())) {
      fail(res, 429, 'rate_limited', 'too many requests');
      return null;
    }
    const r = await core.sessions.verifyRequest(
      {
        user,
        sessionId: header(req, 'x-session-id'),
        sigHeader: header(req, 'x-session-sig'),
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        body,
      },
      verifier,
    );
    if (r.ok) return r.session.party;
    if (r.failure.status === 401) {
      fail(res, 401, 'unauthorized', r.failure.error);
    } else {
      sendJson(res, 200, onExpired ? onExpired() : { ok: false, code: 'session_expired', error: r.failure.error });
    }
    return null;
  };

  const route = async (req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    let params: URLSearchParams | undefined;
    // Parsed only by the routes that read it (not on the order path).
    const query = (): URLSearchParams => (params ??= new URLSearchParams(q < 0 ? '' : url.slice(q + 1)));
    const method = req.method ?? 'GET';

    if (method === 'POST' && path === '/v1/orders') {
      const party = await authenticate(req, res, body, () => core.rejectOrderSessionExpired(headerParty(req), safeJson(body)));
      if (party === null) return;
      sendJson(res, 200, core.placeOrder(party, parseJson(body)));
      return;
    }
    if (method === 'GET' && path === '/healthz') return sendJson(res, 200, core.healthz());
    if (method === 'GET' && path === '/v1/markets') return sendJson(res, 200, { markets: core.markets.toWire() });
    if (method === 'POST' && path === '/v1/session-auth') return sendJson(res, 200, core.sessionAuth(parseJson(body)));
    if (method === 'DELETE' && path.startsWith('/v1/orders/')) {
      const party = await authenticate(req, res, body);
      if (party === null) return;
      const orderId = decodeURIComponent(path.slice('/v1/orders/'.length));
      if (orderId.length === 0 || orderId.includes('/')) return fail(res, 404, 'not_found', 'no such route');
      return sendJson(res, 200, core.cancelOrder(party, orderId));
    }
    if (method === 'POST' && path === '/v1/tpsl') {
      const party = await authenticate(req, res, body);
      if (party === null) return;
      return sendJson(res, 200, core.setTpsl(party, parseJson(body)));
    }
    if (method === 'GET' && path === '/v1/user/me') {
      const party = await authenticate(req, res, body);
      if (party === null) return;
      const b = parseJson(body) as { party?: unknown } | null;
      if (typeof b !== 'object' || b === null || typeof b.party !== 'string') throw new BadRequest('body must be {"party": <X-User>}');
      if (b.party !== party) throw new BadRequest('body party must equal X-User');
      return sendJson(res, 200, core.userMe(party));
    }
    if (method === 'POST' && path === '/v1/withdrawals') {
      const party = await authenticate(req, res, body);
      if (party === null) return;
      return sendJson(res, 200, core.requestWithdrawal(party, parseJson(body)));
    }
    if (method === 'GET' && path === '/v1/orderbook') {
      const d = query().get('depth');
      let depth = 20;
      if (d !== null) {
        if (!/^\d{1,3}$/.test(d) || Number(d) < 1 || Number(d) > 100) throw new BadRequest('depth must be an integer from 1 to 100');
        depth = Number(d);
      }
      const market = query().get('market');
      const a = core.orderbook(market === null ? undefined : market, depth);
      return sendJson(res, a.status, a.body);
    }
    if (path.startsWith('/v1/admin/')) {
      if (!isAdmin(req)) return sendJson(res, 401, { error: 'unauthorized' });
      if (method === 'GET' && path === '/v1/admin/events/stream') {
        const fromHeader = header(req, 'last-event-id');
        const fromQuery = query().get('since');
        const raw = fromHeader !== undefined && fromHeader !== '' ? fromHeader : fromQuery;
        let since: number | undefined;
        if (raw !== null && raw !== undefined) {
          if (!/^\d{1,16}$/.test(raw)) throw new BadRequest('since / Last-Event-ID must be a non-negative integer seq');
          since = Number(raw);
          if (since < core.log.oldestSeq - 1) {
            return sendJson(res, 410, { error: 'since before retention', oldestSeq: core.log.oldestSeq });
          }
        }
        sse.open(req, res, { since, heartbeatMs: settings.heartbeatMs });
        return;
      }
      const m = /^\/v1\/admin\/users\/([^/]+)\/orders$/.exec(path);
      if (method === 'GET' && m) {
        const market = query().get('market');
        const a = core.adminOrders(decodeURIComponent(m[1]!), market === null ? undefined : market);
        return sendJson(res, a.status, a.body);
      }
      if (method === 'POST' && path === '/v1/admin/faucet') return sendJson(res, 200, core.deposit(parseJson(body), 'faucet'));
      if (method === 'POST' && path === '/v1/admin/deposit') return sendJson(res, 200, core.deposit(parseJson(body), 'chain'));
    }
    fail(res, 404, 'not_found', `no route ${method} ${path}`);
  };

  return (req, res) => {
    if (duplicatedUser(req)) {
      res.writeHead(502, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(BAD_GATEWAY_HTML) });
      res.end(BAD_GATEWAY_HTML);
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > settings.maxBodyBytes) tooLarge = true;
      else chunks.push(c);
    });
    req.on('end', () => {
      if (tooLarge) return fail(res, 400, 'bad_request', 'body too large');
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      route(req, res, body).catch((e: unknown) => {
        if (res.headersSent) {
          res.destroy();
          return;
        }
        if (e instanceof BadRequest) return fail(res, 400, 'bad_request', e.message);
        if (e instanceof URIError) return fail(res, 400, 'bad_request', 'malformed percent-encoding');
        console.error('engine: internal error', e);
        fail(res, 500, 'internal', 'internal error');
      });
    });
  };
}

function headerParty(req: IncomingMessage): string {
  return header(req, 'x-user') ?? '';
}

function safeJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
}
