// Fastify 5 treats GET as bodyless: it never runs a content-type parser for it and leaves the
// request stream unread. `GET /v1/user/me` carries a signed JSON body (docs/engine.md "HTTP API"), so the route
// reads the raw bytes itself, bounded in size and time so a slow or huge body cannot hold a socket.
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

export async function readGetBody(request: FastifyRequest, limitBytes: number, timeoutMs: number): Promise<Buffer> {
  const raw = request.raw;
  if (raw.readableEnded) return Buffer.alloc(0);
  const declared = Number(raw.headers['content-length'] ?? 0);
  if (declared > limitBytes) throw new ApiError('payload_too_large', `request body is larger than ${limitBytes} bytes`);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('error', onError);
    };
    const fail = (err: ApiError) => {
      cleanup();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) fail(new ApiError('payload_too_large', `request body is larger than ${limitBytes} bytes`));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = () => fail(new ApiError('bad_request', 'the request body could not be read'));
    const timer = setTimeout(() => fail(new ApiError('bad_request', 'the request body did not arrive in time')), timeoutMs);
    raw.on('data', onData);
    raw.on('end', onEnd);
    raw.on('error', onError);
  });
}
