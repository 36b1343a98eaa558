// The message rate of one client address (WS_ADDRESS_MESSAGES_PER_S, ADR 0350): the streams of an
// address share one bucket, checked before a message is read. Many connections each within its
// own rate (WS_CLIENT_MESSAGES_PER_S) but past the address's together: the connection that finds
// the bucket empty is closed 1008, the address's upgrades are refused 429 budget_exhausted
// `message_rate`, and another address is answered meanwhile; an address sending below the bound
// across several connections has every message answered. Real WebSocket clients from loopback addresses.
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { eventually } from '../../support/eventually.js';

const ADDRESS_RATE = 20;

type Opened = { ws: WebSocket; closed: Promise<{ code: number; reason: string }>; answers: Map<string, string> };
type Refused = { status: number; body: Record<string, unknown> };

function open(url: string, from: string): Promise<Opened | Refused> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream`, { localAddress: from, perMessageDeflate: false });
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  const answers = new Map<string, string>();
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as { kind?: string; id?: unknown };
    if (typeof m.id === 'string' && m.kind) answers.set(m.id, m.kind);
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, closed, answers }));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    ws.once('error', reject);
  });
}

function opened(o: Opened | Refused): Opened {
  if (!('ws' in o)) throw new Error(`refused ${o.status} ${JSON.stringify(o.body)}`);
  return o;
}

const subscribe = (id: string) => JSON.stringify({ op: 'subscribe', id, kinds: ['trade'] });
/** The status of a plain GET of /v1/stream (what a browser asks to learn why its upgrade was refused). */
const plainGet = (url: string, from: string) =>
  new Promise<number>((resolve, reject) => get(`${url}/v1/stream`, { localAddress: from }, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits up to `withinMs` for an answer to each id (what is missing then is for the caller's expect to name). */
async function answered(c: Opened, ids: string[], withinMs: number): Promise<void> {
  await eventually(() => ids.every((id) => c.answers.has(id)), { timeoutMs: withinMs, everyMs: 20 }).catch(() => undefined);
}

describe('message rate per client address', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // Each connection's own rate far above the address's: only the address bound can close them.
    gw = await startGateway({ WS_ADDRESS_MESSAGES_PER_S: String(ADDRESS_RATE), WS_CLIENT_MESSAGES_PER_S: '1000', WS_CLIENT_MESSAGE_BURST: '1000' }, { listen: true });
  });
  afterAll(async () => gw.close());

  it('closes a flooding address 1008 and refuses its upgrades while another address is answered', async () => {
    const flood = await Promise.all(Array.from({ length: 5 }, async () => opened(await open(gw.url, '127.0.0.2'))));
    const other = opened(await open(gw.url, '127.0.0.3'));
    // 5 × 30 messages at once: within each connection's own bound, over the address's (burst 2 × rate).
    for (let i = 0; i < 30; i++) for (const [n, c] of flood.entries()) if (c.ws.readyState === WebSocket.OPEN) c.ws.send(subscribe(`f${n}-${i}`));
    const first = await Promise.race(flood.map((c) => c.closed));
    expect(first).toEqual({ code: 1008, reason: 'too many messages from this address' });

    const refused = await open(gw.url, '127.0.0.2');
    expect('status' in refused && refused.status).toBe(429);
    expect((refused as Refused).body).toMatchObject({ code: 'budget_exhausted', budget: 'message_rate' });
    expect(Number((refused as Refused).body.retryAfterS)).toBeGreaterThanOrEqual(1);
    expect(await plainGet(gw.url, '127.0.0.2')).toBe(429);

    // Another address is neither closed nor refused: its message is answered.
    other.ws.send(subscribe('other'));
    await answered(other, ['other'], 5_000);
    expect(other.answers.get('other')).toBe('stream.ack');
    expect(other.ws.readyState).toBe(WebSocket.OPEN);
    expect('ws' in (await open(gw.url, '127.0.0.3'))).toBe(true);
    expect(await plainGet(gw.url, '127.0.0.3')).toBe(426);
    for (const c of [...flood, other]) c.ws.terminate();
  });

  it('answers every message of an address below the bound, across its connections, past the burst', async () => {
    const conns = await Promise.all(Array.from({ length: 4 }, async () => opened(await open(gw.url, '127.0.0.4'))));
    // 4 connections × 4 a second = 16 a second (the bound: 20) for 3.5 s: 56 messages, more than the burst of 40.
    const ids: string[][] = conns.map(() => []);
    for (let tick = 0; tick < 14; tick++) {
      for (const [n, c] of conns.entries()) {
        const id = `h${n}-${tick}`;
        ids[n]!.push(id);
        c.ws.send(subscribe(id));
      }
      // Pacing: a round every 250 ms (4 a second per connection).
      await sleep(250);
    }
    for (const [n, c] of conns.entries()) {
      await answered(c, ids[n]!, 5_000);
      expect(ids[n]!.map((id) => c.answers.get(id))).toEqual(ids[n]!.map(() => 'stream.ack'));
      expect(c.ws.readyState).toBe(WebSocket.OPEN);
    }
    expect('ws' in (await open(gw.url, '127.0.0.4'))).toBe(true);
    for (const c of conns) c.ws.terminate();
  });
});
