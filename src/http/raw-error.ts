// An HTTP error written straight onto a socket, for the places where no Fastify reply exists: a
// refused WebSocket upgrade, a request the HTTP parser rejected, a connection over its address's
// cap. Same `{error, code}` body and CORS header as every other gateway answer, then the socket closes.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * The Access-Control-Allow-Origin to answer (CORS_ORIGINS): `*` when configured, else the
 * request's Origin when it is listed, else none (null).
 */
export function allowedOrigin(corsOrigins: readonly string[], origin: string | undefined): string | null {
  if (corsOrigins.includes('*')) return '*';
  return origin !== undefined && corsOrigins.includes(origin) ? origin : null;
}

export function writeRawError(
  socket: Duplex,
  status: number,
  code: string,
  error: string,
  allowOrigin: string | null = null,
  extraHeaders: Record<string, string> = {},
  extraBody: Record<string, unknown> = {},
): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error, code, ...extraBody });
  // Only header-safe characters may be echoed (an allowed origin is one of the configured strings).
  const cors =
    allowOrigin === null || /[\r\n]/.test(allowOrigin)
      ? ''
      : `Access-Control-Allow-Origin: ${allowOrigin}\r\n${allowOrigin === '*' ? '' : 'Vary: Origin\r\n'}`;
  const extra = Object.entries(extraHeaders)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      cors +
      extra +
      'Connection: close\r\n\r\n' +
      body,
  );
  // A peer that never reads must not keep the socket half-closed.
  setTimeout(() => socket.destroy(), 2_000).unref();
}
