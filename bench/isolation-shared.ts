// What bench/isolation.ts and its victim process (bench/isolation-victim.ts) share: HTTP from a
// chosen local address, sessions, the victim's window of orders and pings, deflate sockets.
import { Agent, request as httpRequest } from 'node:http';
import WebSocket from 'ws';
import { GatewayClient, requestMessage, localParty, type Session } from '../packages/client/src/index.js';

export const VICTIM_EVERY_MS = 200;
export const PING_EVERY_MS = 100;

export const agents = new Map<string, Agent>();
/** One keep-alive agent per local address, so each attacker is a client of its own. */
export function agentFor(from: string): Agent {
  let a = agents.get(from);
  if (!a) agents.set(from, (a = new Agent({ keepAlive: true, maxSockets: 256, localAddress: from } as ConstructorParameters<typeof Agent>[0])));
  return a;
}

export function http(from: string, url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: agentFor(from) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = text ? JSON.parse(text) : null;
        } catch {
          json = text;
        }
        resolve({ status: res.statusCode ?? 0, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const q = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
export const r1 = (x: number) => Math.round(x * 10) / 10;

export interface Sample {
  orders: number[];
  errors: string[];
  pongs: number[];
  pongsMissing: number;
}

export async function sessionFor(gatewayUrl: string, name: string): Promise<Session> {
  const client = new GatewayClient({ baseUrl: gatewayUrl, retry: { retries: 0 } });
  const created = await client.createSession(await localParty(name));
  if (!created.ok) throw new Error(`session ${name}: ${created.code}`);
  return client.session!;
}

export const signedHeaders = (s: Session, sig: string, json = true) => ({ ...(json ? { 'content-type': 'application/json' } : {}), 'x-user': s.party, 'x-session-id': s.sessionId, 'x-session-sig': sig });

/** The victim for `ms`: an order every VICTIM_EVERY_MS (sell then buy at one price: they match), a ping every PING_EVERY_MS. */
export async function victim(gatewayUrl: string, s: Session, pinger: WebSocket, ms: number): Promise<Sample> {
  const sample: Sample = { orders: [], errors: [], pongs: [], pongsMissing: 0 };
  const until = performance.now() + ms;
  const pings = (async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      const pong = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), 10_000);
        pinger.once('pong', () => {
          clearTimeout(timer);
          resolve(true);
        });
        pinger.ping();
      });
      if (pong) sample.pongs.push(performance.now() - t0);
      else sample.pongsMissing++;
      await sleep(Math.max(0, PING_EVERY_MS - (performance.now() - t0)));
    }
  })();
  let i = 0;
  const orders: Promise<void>[] = [];
  while (performance.now() < until) {
    const t0 = performance.now();
    const body = JSON.stringify({ market: 'ETH-PERP', side: i++ % 2 === 0 ? 'sell' : 'buy', type: 'limit', size: '0.01', price: '3000' });
    const ts = await s.nextTs();
    const sig = `${ts}.${await s.signature(requestMessage('POST', '/v1/orders', ts, body))}`;
    orders.push(
      http('127.0.0.1', `${gatewayUrl}/v1/orders`, 'POST', signedHeaders(s, sig), body).then(
        (r) => {
          if (r.status === 200 && r.json?.ok === true) sample.orders.push(performance.now() - t0);
          else sample.errors.push(`${r.status} ${r.json?.code ?? r.json?.reason ?? ''}`);
        },
        (err: Error) => void sample.errors.push(err.message),
      ),
    );
    await sleep(Math.max(0, VICTIM_EVERY_MS - (performance.now() - t0)));
  }
  await Promise.all([pings, ...orders]);
  return sample;
}

/** A deflate socket from `from` (open once resolved). */
export function deflateSocket(url: string, from: string): Promise<WebSocket> {
  const ws = new WebSocket(`${url}?compress=deflate`, { localAddress: from, perMessageDeflate: { threshold: 0, clientNoContextTakeover: true, serverNoContextTakeover: true } });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

