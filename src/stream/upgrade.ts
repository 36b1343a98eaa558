// The HTTP upgrade of /v1/stream: validation, connection limit and party proof happen before the
// WebSocket handshake, so a refused client gets a plain HTTP status with a JSON `{error, code}` body.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AppDeps } from '../app.js';
import { verifySignedRequest } from '../auth/guards.js';
import { SIGNATURE_WINDOW_MS } from '../auth/signature.js';
import { ReplayCache, type ReplayGuard } from '../auth/replay-cache.js';
import { ApiError } from '../http/errors.js';
import type { StreamFanout } from './fanout.js';
import type { StreamMetrics } from './metrics.js';
import { parseSubscription, type Subscription } from './subscription.js';

export const STREAM_PATH = '/v1/stream';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  503: 'Service Unavailable',
};

/**
 * The Access-Control-Allow-Origin of a refusal, as for the HTTP routes (CORS_ORIGINS): `*` when
 * configured, else the request's Origin when it is listed, else none (null).
 */
export function refusalOrigin(corsOrigins: readonly string[], origin: string | undefined): string | null {
  if (corsOrigins.includes('*')) return '*';
  return origin !== undefined && corsOrigins.includes(origin) ? origin : null;
}

/** Writes an HTTP error on a socket that has not been upgraded, then closes it. */
export function refuseSocket(socket: Duplex, status: number, code: string, error: string, allowOrigin: string | null = null): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error, code });
  // Only header-safe characters may be echoed (an allowed origin is one of the configured strings).
  const cors =
    allowOrigin === null || /[\r\n]/.test(allowOrigin)
      ? ''
      : `Access-Control-Allow-Origin: ${allowOrigin}\r\n${allowOrigin === '*' ? '' : 'Vary: Origin\r\n'}`;
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      cors +
      'Connection: close\r\n\r\n' +
      body,
  );
}

export interface UpgradeContext {
  deps: Pick<AppDeps, 'config' | 'sessions' | 'logger' | 'fleet'>;
  hub: StreamFanout;
  knownMarkets: () => ReadonlySet<string> | null;
  metrics: StreamMetrics;
}

/** Proves the parties asked for: with auth, only the one party the query's signature proves. */
async function authorize(sub: Subscription, ctx: UpgradeContext, replays: ReplayGuard): Promise<void> {
  if (ctx.deps.config.authDisabled || sub.parties.size === 0) return;
  if (!sub.proof) {
    throw new ApiError('unauthorized', 'a "party" filter needs proof in the query: user, sessionId, sig (<tsMs>.<hex> over "GET\\n/v1/stream\\n<tsMs>\\n")');
  }
  const proven = await verifySignedRequest(ctx.deps.sessions, replays, {
    method: 'GET',
    target: STREAM_PATH,
    body: '',
    headers: sub.proof,
  });
  for (const p of sub.parties) {
    if (p !== proven) throw new ApiError('forbidden', `party ${p} is not the party this connection proved (${proven})`);
  }
}

export function createUpgradeHandler(ctx: UpgradeContext): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const replays = ctx.deps.fleet?.replays ?? new ReplayCache(SIGNATURE_WINDOW_MS * 2);

  return (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const origin = refusalOrigin(ctx.deps.config.corsOrigins, typeof req.headers.origin === 'string' ? req.headers.origin : undefined);
    const refuse = (s: Duplex, status: number, code: string, error: string): void => {
      ctx.metrics.rejected.inc({ status: String(status) });
      refuseSocket(s, status, code, error, origin);
    };
    const url = new URL(req.url ?? '/', 'http://gateway.invalid');
    if (url.pathname !== STREAM_PATH) return refuse(socket, 404, 'not_found', `no WebSocket route ${url.pathname}`);
    // Shutdown and the connection limit, answered here; checked again once the proof is checked.
    const unavailable = (): boolean => {
      if (ctx.hub.isClosed) refuse(socket, 503, 'shutting_down', 'the gateway is shutting down');
      else if (ctx.hub.size >= ctx.deps.config.wsMaxConnections) {
        refuse(socket, 503, 'too_many_connections', `the stream holds its maximum of ${ctx.deps.config.wsMaxConnections} connections; retry later`);
      } else return false;
      return true;
    };
    if (unavailable()) return;
    let sub: Subscription;
    try {
      sub = parseSubscription(url.searchParams, ctx.knownMarkets());
    } catch (err) {
      const e = err as ApiError;
      return refuse(socket, e.status, e.code, e.message);
    }
    authorize(sub, ctx, replays).then(
      () => {
        // Shutdown may have begun while the proof was checked (a database read), and upgrades whose
        // proofs were checked at the same time must not pass the limit together.
        if (socket.destroyed || unavailable()) return;
        try {
          ctx.hub.accept(req, socket, head, sub);
        } catch (err) {
          ctx.deps.logger.warn({ err }, 'stream upgrade: hand-over failed');
          socket.destroy(); // the handshake may have begun: no HTTP answer can follow; the client retries
        }
      },
      (err: unknown) => {
        const e = err instanceof ApiError ? err : new ApiError('database_unavailable', 'could not check the session');
        if (!(err instanceof ApiError)) ctx.deps.logger.warn({ err }, 'stream upgrade: session check failed');
        refuse(socket, e.status, e.code, e.message);
      },
    );
  };
}
