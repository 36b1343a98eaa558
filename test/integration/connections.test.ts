// Socket-level defences over raw loopback sockets: header, request and idle deadlines close slow
// clients (slow-loris); a per-address cap bounds concurrent connections; what Node's HTTP parser
// refuses is answered in the gateway's `{error, code}` shape with CORS headers.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';

interface RawClient {
  socket: Socket;
  data: () => string;
  closed: Promise<number>;
}

function rawClient(url: string, localAddress = '127.0.0.1'): Promise<RawClient> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress });
    let data = '';
    socket.on('data', (c) => {
      data += c.toString('latin1');
    });
    socket.on('error', () => {});
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now())));
    socket.once('connect', () => resolve({ socket, data: () => data, closed }));
    socket.once('error', reject);
  });
}

/** Resolves with the close time, or -1 if the socket is still open after `ms`. */
const closedWithin = (c: RawClient, ms: number) => Promise.race([c.closed, new Promise<number>((r) => setTimeout(() => r(-1), ms))]);

function parse(raw: string): { status: number; headers: string; body: any } {
  const [head = '', body = ''] = raw.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head.toLowerCase(), body: body ? JSON.parse(body) : undefined };
}

async function send(url: string, bytes: string): Promise<ReturnType<typeof parse>> {
  const c = await rawClient(url);
  c.socket.write(bytes);
  await closedWithin(c, 5_000);
  return parse(c.data());
}

describe('slow clients and connection caps', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(
      { HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_IDLE_TIMEOUT_MS: '1500', ENGINE_TIMEOUT_MS: '1000', HTTP_MAX_CONNECTIONS_PER_IP: '4' },
      { listen: true },
    );
  });
  afterAll(async () => {
    await gw.close();
  });

  it('closes a client trickling its headers, one that never sends anything, and one that sends part of its body', async () => {
    const trickle = await rawClient(gw.url, '127.0.0.2');
    trickle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const timer = setInterval(() => trickle.socket.write('X'), 100);
    const silent = await rawClient(gw.url, '127.0.0.2');
    const body = await rawClient(gw.url, '127.0.0.2');
    body.socket.write('POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"market"');
    const start = Date.now();
    try {
      for (const c of [trickle, silent, body]) {
        const at = await closedWithin(c, 5_000);
        expect(at, 'socket still open').not.toBe(-1);
        expect(at - start).toBeLessThan(5_000);
      }
      expect(parse(trickle.data())).toMatchObject({ status: 408, body: { code: 'request_timeout' } });
      // The body deadline (HTTP_REQUEST_TIMEOUT_MS), not the idle one, closed the slow body.
      expect(parse(body.data())).toMatchObject({ status: 408, body: { code: 'request_timeout' } });
    } finally {
      clearInterval(timer);
    }
  });

  it('caps concurrent connections per client address with 429 too_many_connections; other addresses are served', async () => {
    const held = await Promise.all([1, 2, 3, 4].map(() => rawClient(gw.url, '127.0.0.3')));
    const over = await rawClient(gw.url, '127.0.0.3');
    expect(await closedWithin(over, 3_000)).not.toBe(-1);
    expect(parse(over.data())).toMatchObject({ status: 429, body: { code: 'too_many_connections' } });
    const ok = await send(gw.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(ok.status).toBe(200);
    for (const c of held) c.socket.destroy();
  });
});

describe('HTTP parser errors', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ CORS_ORIGINS: '*' }, { listen: true });
  });
  afterAll(async () => {
    await gw.close();
  });

  it.each([
    ['Content-Length with Transfer-Encoding', 'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['a duplicated Content-Length', 'POST /v1/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
    ['a bare LF', 'GET /healthz HTTP/1.1\nHost: x\n\n'],
  ])('answers %s with 400 bad_request in the gateway shape, with CORS', async (_name, bytes) => {
    const res = await send(gw.url, bytes);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'bad_request', error: expect.any(String) });
    expect(res.headers).toContain('access-control-allow-origin: *');
  });

  it('answers a URL over 16 KB with 414 and an oversize header block with 431', async () => {
    const longUrl = await send(gw.url, `GET /v1/orderbook?market=${'A'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(longUrl).toMatchObject({ status: 414, body: { code: 'uri_too_long' } });
    const bigHeaders = await send(gw.url, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(bigHeaders).toMatchObject({ status: 431, body: { code: 'headers_too_large' } });
  });
});
