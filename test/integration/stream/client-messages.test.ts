// What a stream client may send (docs/security.md): messages past WS_CLIENT_MESSAGES_PER_S (with
// bursts of WS_CLIENT_MESSAGE_BURST) close the client with 1008; a message over
// WS_CLIENT_MESSAGE_MAX_BYTES is answered `payload_too_large` (not read), one over four times
// that closes it with 1009; a client within the bound stays connected. Real WebSocket clients
// against a listening gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/scripted-sse.js';

function open(url: string, deflate = false): Promise<{ ws: WebSocket; closed: Promise<number> }> {
  const ws = deflate
    ? new WebSocket(`${url.replace('http', 'ws')}/v1/stream?compress=deflate`, { perMessageDeflate: { threshold: 0 } })
    : new WebSocket(`${url.replace('http', 'ws')}/v1/stream`);
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, closed }));
    ws.once('error', reject);
  });
}

/** Resolves once the gateway has handled everything this client sent before (its pong follows them). */
function roundTrip(ws: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    ws.once('pong', () => resolve());
    ws.ping();
  });
}

describe('client messages on the stream', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ WS_CLIENT_MESSAGES_PER_S: '5', WS_CLIENT_MESSAGE_BURST: '10', WS_CLIENT_MESSAGE_MAX_BYTES: '4096' }, { listen: true });
  });
  afterAll(async () => gw.close());

  it('closes a flooding client with 1008 and keeps a quiet one', async () => {
    const quiet = await open(gw.url);
    const flood = await open(gw.url);
    const message = 'x'.repeat(4000);
    let sent = 0;
    let state = 'open';
    void flood.closed.then(() => (state = 'closed'));
    // Sends as fast as the socket takes them until the gateway closes it.
    while (state === 'open' && sent < 100_000) {
      flood.ws.send(message);
      sent++;
      if (sent % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(await flood.closed).toBe(1008);
    // The quiet client sends within its rate and is still there.
    for (let i = 0; i < 5; i++) quiet.ws.send('{}');
    await roundTrip(quiet.ws);
    expect(quiet.ws.readyState).toBe(WebSocket.OPEN);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/bff_ws_flood_closes_total 1\b/);
    quiet.ws.close();
  });

  it('answers a message over the size bound with payload_too_large, and closes one over four times it with 1009', async () => {
    const big = await open(gw.url);
    const answer = new Promise<Record<string, any>>((resolve) => big.ws.once('message', (data) => resolve(JSON.parse(data.toString()))));
    big.ws.send(JSON.stringify({ id: 'big-1', op: 'subscribe', pad: 'y'.repeat(4097) }));
    expect(await answer).toMatchObject({ kind: 'stream.error', id: 'big-1', op: 'subscribe', payload: { code: 'payload_too_large', status: 413 } });
    expect(big.ws.readyState).toBe(WebSocket.OPEN);
    big.ws.send('y'.repeat(4 * 4096 + 1));
    expect(await big.closed).toBe(1009);
  });

  it('on a deflate connection, stops inflating at the size bound and closes the sender 1009; a deflate neighbour keeps its pongs', async () => {
    const neighbour = await open(gw.url, true);
    const bomb = await open(gw.url, true);
    expect(bomb.ws.extensions).toContain('permessage-deflate');
    // A few dozen bytes on the wire, three times the bound inflated: ws stops at the bound (a plain
    // connection's message this size is read whole and answered payload_too_large, above).
    bomb.ws.send(JSON.stringify({ id: 'bomb', op: 'subscribe', pad: ' '.repeat(3 * 4096) }));
    expect(await bomb.closed).toBe(1009);
    // The pong to a deflate connection's ping comes straight from the socket.
    await roundTrip(neighbour.ws);
    expect(neighbour.ws.readyState).toBe(WebSocket.OPEN);
    neighbour.ws.close();
  });

  it('a burst within the bound is accepted, the next message past it is not', async () => {
    const c = await open(gw.url);
    for (let i = 0; i < 10; i++) c.ws.send('{}');
    await roundTrip(c.ws);
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    for (let i = 0; i < 5; i++) c.ws.send('{}');
    expect(await c.closed).toBe(1008);
    await waitFor(() => c.ws.readyState === WebSocket.CLOSED);
  });
});
