// Liveness needs an answer to the gateway's own ping: ws reports every pong, solicited or not, so a
// peer that never reads but keeps sending pongs of its own must still be judged dead.
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { wsUrl } from './helpers.js';

function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

describe('stream liveness', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ WS_PING_MS: '100' }, { listen: true, overrides: { live: null } });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('drops a peer that never reads but sends unsolicited pongs, and keeps one that answers', async () => {
    const liar = await open(wsUrl(gw.url));
    const honest = await open(wsUrl(gw.url));
    let honestClosed = false;
    honest.on('close', () => {
      honestClosed = true;
    });
    const closed = new Promise<number>((resolve) => liar.once('close', () => resolve(Date.now())));
    (liar as unknown as { _socket: { pause(): void } })._socket.pause(); // reads nothing, so never sees a ping
    const pongs = setInterval(() => liar.pong(Buffer.from('alive')), 20);
    const start = Date.now();
    try {
      const at = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 3_000))]);
      expect(at, 'the liar was never dropped').not.toBe(-1);
      expect(at - start).toBeLessThan(3_000);
      expect(honestClosed).toBe(false);
      expect(honest.readyState).toBe(WebSocket.OPEN);
    } finally {
      clearInterval(pongs);
      liar.terminate();
      honest.close();
    }
  });

  it('drops a peer that echoes an earlier ping instead of the one it was sent', async () => {
    // The ping of a slice is made for that slice only: a pong replaying the first payload it saw
    // (with the socket's own answers turned off) is no answer to the pings that follow.
    const replayer = new WebSocket(wsUrl(gw.url), { autoPong: false });
    await new Promise((resolve, reject) => replayer.once('open', resolve).once('error', reject));
    const payloads: Buffer[] = [];
    replayer.on('ping', (data: Buffer) => {
      payloads.push(data);
      replayer.pong(payloads[0]);
    });
    const closed = new Promise<boolean>((resolve) => replayer.once('close', () => resolve(true)));
    try {
      const dropped = await Promise.race([closed, new Promise<boolean>((r) => setTimeout(() => r(false), 3_000))]);
      expect(dropped, 'the replaying peer was never dropped').toBe(true);
      expect(payloads.length).toBeGreaterThanOrEqual(2);
      expect(payloads[1]!.equals(payloads[0]!)).toBe(false);
    } finally {
      replayer.terminate();
    }
  });
});
