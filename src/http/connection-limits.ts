// Socket-level defences of the HTTP server (docs/security.md):
// - the connection budget of the process's open-file limit (connectionBudget, ADR 0130): streams
//   are refused before they could take the last files, and the server as a whole stops short of
//   the limit, so probes, /metrics and the gateway's own connections always find a descriptor;
// - a cap on concurrent TCP connections per client address (HTTP_MAX_CONNECTIONS_PER_IP); a
//   connection over it is answered 429 `too_many_connections` and closed before anything is parsed.
//   Streams are TCP connections too and count against it. It keys on the socket's peer address
//   (IPv6 by its /64, src/client-address.ts), as nothing else is known before a byte is parsed:
//   behind a reverse proxy every connection comes from the proxy, so disable it (0) there and let
//   the proxy cap connections per client (deploy/nginx/gateway.conf.template does).
// - errors of Node's HTTP parser (smuggling shapes such as CL+TE or a duplicated Content-Length,
//   bare LF, an over-long URL or header block) and Node's header/request deadlines, answered with
//   the gateway's `{error, code}` and CORS header instead of Node's or Fastify's own text.
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Counter, type Registry } from 'prom-client';
import type { Config } from '../config/env.js';
import { processFileLimit } from '../config/file-limit.js';
import { addressGroup } from '../client-address.js';
import { allowedOrigin, writeRawError } from './raw-error.js';

/** What the open-file limit leaves for connections (docs/configuration.md FD_HEADROOM). */
export interface ConnectionBudget {
  /** The soft RLIMIT_NOFILE read at start; null when unlimited or unknown. */
  fileLimit: number | null;
  /** Descriptors no stream takes (FD_HEADROOM, or 5 % of the limit and at least 256). */
  headroom: number;
  /** Stream connections open at once: WS_MAX_CONNECTIONS, or limit − headroom when less. */
  streams: number;
  /**
   * TCP connections the HTTP server holds at once (net.Server maxConnections): limit − headroom / 2.
   * Between `streams` and this, headroom / 2 descriptors stay for probes, /metrics and REST while
   * the stream is full; the other half for what the process opens itself (the database pool, the
   * engine's connections, Redis, NATS, its own files). null: no file limit to keep under.
   */
  connections: number | null;
}

/** The default headroom of a limit: one descriptor in twenty, at least 256. */
export function defaultHeadroom(fileLimit: number): number {
  return Math.max(256, Math.ceil(fileLimit / 20));
}

export function connectionBudget(config: Pick<Config, 'wsMaxConnections' | 'fdHeadroom'>, fileLimit: number | null = processFileLimit()): ConnectionBudget {
  if (fileLimit === null) return { fileLimit, headroom: config.fdHeadroom ?? 0, streams: config.wsMaxConnections, connections: null };
  const headroom = config.fdHeadroom ?? defaultHeadroom(fileLimit);
  return {
    fileLimit,
    headroom,
    streams: Math.max(0, Math.min(config.wsMaxConnections, fileLimit - headroom)),
    connections: Math.max(1, fileLimit - Math.ceil(headroom / 2)),
  };
}

export function installConnectionLimits(server: Server, config: Config, registry?: Registry, budget: ConnectionBudget = connectionBudget(config)): void {
  // Past it Node closes a new connection as soon as it is accepted: the last resort, for sockets
  // that are not streams (which the stream gate refuses with a 503 well before). Counted, as
  // nothing is answered to them.
  if (budget.connections !== null) {
    server.maxConnections = budget.connections;
    if (registry) {
      const dropped = new Counter({
        name: 'bff_http_connections_dropped_total',
        help: "Connections closed as they arrived because the server held its maximum (the process's open-file limit less FD_HEADROOM / 2)",
        registers: [registry],
      });
      server.on('drop', () => dropped.inc());
    }
  }
  const cap = config.httpMaxConnectionsPerIp;
  if (cap === 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = addressGroup(socket.remoteAddress ?? 'unknown');
    const count = (open.get(address) ?? 0) + 1;
    if (count > cap) {
      writeRawError(socket, 429, 'too_many_connections', `at most ${cap} concurrent connections per client address`, allowedOrigin(config.corsOrigins, undefined), {
        'Retry-After': '1',
      });
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const n = (open.get(address) ?? 1) - 1;
      if (n <= 0) open.delete(address);
      else open.set(address, n);
    });
  });
}

/** The Origin header of a request the parser rejected, read from the bytes it saw. */
function originOf(err: { rawPacket?: Buffer }): string | undefined {
  const raw = err.rawPacket?.toString('latin1');
  const m = raw ? /\r?\norigin:[ \t]*([^\r\n]*)/i.exec(raw) : null;
  return m ? m[1]!.trim() : undefined;
}

/** A header overflow whose request line never ended: the URL itself is too long. */
function urlTooLong(err: { rawPacket?: Buffer }): boolean {
  const raw = err.rawPacket;
  if (!raw) return false;
  const eol = raw.indexOf(0x0a);
  return eol === -1 || eol > 8_192;
}

/** Fastify's clientErrorHandler: replaces its `{"error":"Bad Request","message":"Client Error"}`. */
export function clientErrorHandler(config: Config): (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const origin = allowedOrigin(config.corsOrigins, originOf(err));
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      return writeRawError(socket, 408, 'request_timeout', 'the request did not arrive in time', origin);
    }
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      return urlTooLong(err)
        ? writeRawError(socket, 414, 'uri_too_long', 'the request URL is too long', origin)
        : writeRawError(socket, 431, 'headers_too_large', 'the request headers are too large', origin);
    }
    writeRawError(socket, 400, 'bad_request', `malformed HTTP request (${err.code ?? 'parse error'})`, origin);
  };
}
