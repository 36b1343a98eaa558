// The fair share of the engine (docs/trading.md "A fair share of the engine", ADR 0210) against the
// reference engine over real HTTP: an address flooding batches of cancels of unknown orders from an
// unfunded party is held to its share (a batch past its room refused whole, items past it refused
// one by one, 429 budget_exhausted `engine_calls`), while another address's orders are answered.
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { deskTrader } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';
import { httpFrom } from '../../support/http-from.js';
import { GatewayClient, localParty, requestMessage, signCancel, type Session } from '../../../packages/client/src/index.js';

describe('a fair share of the engine (reference engine)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let victim: GatewayClient;
  let flooder: Session;

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    gw = await testLiveGateway(file, engine, { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000', ENGINE_ADDRESS_IN_FLIGHT: '2', ENGINE_ADDRESS_QUEUE: '20' });
    victim = await deskTrader(gw.url, engine, 'fair-victim');
    const unfunded = new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 } });
    const s = await unfunded.createSession(await localParty('fair-flooder'));
    if (!s.ok) throw new Error(s.code);
    flooder = unfunded.session!;
  });

  async function batchOfCancels(n: number, tag: string): Promise<string> {
    const items = [];
    for (let i = 0; i < n; i++) items.push(await signCancel(flooder, `${tag}-${i}`));
    return JSON.stringify({ user: flooder.party, sessionId: flooder.sessionId, items });
  }

  it('refuses a batch past the address room whole, before any of its work', async () => {
    const r = await httpFrom('127.0.0.2', `${gw.url}/v1/orders/batch`, 'POST', { 'content-type': 'application/json' }, await batchOfCancels(50, 'whole'));
    expect(r.status).toBe(429);
    expect(r.json).toMatchObject({ code: 'budget_exhausted', budget: 'engine_calls', retryAfterS: 1 });
    expect(r.json.error).toMatch(/no room for 50 more engine call/);
    expect(r.headers['retry-after']).toBe('1');
    // Refused at the door (ADR 0365): only the request its limiter hook counted, not the batch's weight of 5.
    expect(Number(r.headers['ratelimit-remaining'])).toBe(100_000 - 1);
    expect(r.headers['ratelimit-limit']).toBe('100000');
    // Judged right after the body is parsed, before its checks: a malformed batch past the room is refused for the room.
    const malformed = JSON.parse(await batchOfCancels(50, 'malformed')) as { items: Array<Record<string, unknown>> };
    malformed.items[3]!.extra = true;
    const m = await httpFrom('127.0.0.2', `${gw.url}/v1/orders/batch`, 'POST', { 'content-type': 'application/json' }, JSON.stringify(malformed));
    expect(m.status).toBe(429);
    expect(m.json).toMatchObject({ code: 'budget_exhausted', budget: 'engine_calls' });
  });

  it('lets a batch within the room through, and refuses one past it on the socket before charging anything', async () => {
    const within = await httpFrom('127.0.0.2', `${gw.url}/v1/orders/batch`, 'POST', { 'content-type': 'application/json' }, await batchOfCancels(20, 'within'));
    expect(within.status).toBe(200);
    expect(within.json.weight).toBe(2);
    expect(within.json.results).toHaveLength(20);
    for (const item of within.json.results as Array<{ outcome: string }>) expect(item.outcome).toBe('answered');
    expect(Number(within.headers['ratelimit-remaining'])).toBe(100_000 - 4);
    const ws = new WebSocket(`${gw.url.replace('http', 'ws')}/v1/stream?kinds=trade&snapshot=false`, { localAddress: '127.0.0.2' });
    try {
      const refused = new Promise<{ id?: unknown; op?: string; payload?: Record<string, unknown> }>((resolve) =>
        ws.on('message', (data) => {
          const m = JSON.parse(data.toString()) as { kind: string; id?: unknown; op?: string; payload?: Record<string, unknown> };
          if (m.kind === 'stream.error') resolve(m);
        }),
      );
      await new Promise<void>((resolve, reject) => (ws.once('open', () => resolve()), ws.once('error', reject)));
      ws.send(JSON.stringify({ op: 'order.batch', id: 'past', ...JSON.parse(await batchOfCancels(50, 'socket')) }));
      expect(await refused).toMatchObject({ id: 'past', op: 'order.batch', payload: { code: 'budget_exhausted', budget: 'engine_calls', status: 429 } });
    } finally {
      ws.terminate();
    }
    // The socket's refusal spent nothing of the address's budget: the next request is its fifth unit.
    const next = await httpFrom('127.0.0.2', `${gw.url}/v1/orderbook?depth=1`, 'GET');
    expect(Number(next.headers['ratelimit-remaining'])).toBe(100_000 - 5);
  });

  it('holds a flood of batches to its share while another address is answered', async () => {
    const bodies = await Promise.all(Array.from({ length: 8 }, (_, b) => batchOfCancels(20, `flood${b}`)));
    const flood = Promise.all(bodies.map((body) => httpFrom('127.0.0.2', `${gw.url}/v1/orders/batch`, 'POST', { 'content-type': 'application/json' }, body)));
    const session = victim.session!;
    const order = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '1000' });
    const ts = await session.nextTs();
    const sig = `${ts}.${await session.signature(requestMessage('POST', '/v1/orders', ts, order))}`;
    const placed = await httpFrom('127.0.0.3', `${gw.url}/v1/orders`, 'POST', { 'content-type': 'application/json', 'x-user': session.party, 'x-session-id': session.sessionId, 'x-session-sig': sig }, order);
    expect(placed.status).toBe(200);
    expect(placed.json).toMatchObject({ ok: true });
    const answers = await flood;
    const outcomes = new Map<string, number>();
    for (const a of answers) {
      if (a.status !== 200) {
        expect(a.status).toBe(429);
        expect(a.json).toMatchObject({ code: 'budget_exhausted', budget: 'engine_calls' });
        outcomes.set('batch refused', (outcomes.get('batch refused') ?? 0) + 1);
        continue;
      }
      for (const item of a.json.results as Array<{ outcome: string; status: number; body: { code?: string; budget?: string } }>) {
        const key = item.outcome === 'answered' ? `answered ${item.status}` : `${item.status} ${item.body.code} ${item.body.budget ?? ''}`.trim();
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    }
    // Every item the engine saw answered (unknown order); every other one refused by the share, never a timeout.
    for (const key of outcomes.keys()) expect(['batch refused', 'answered 404', 'answered 200', '429 budget_exhausted engine_calls']).toContain(key);
    expect([...outcomes.keys()].some((k) => k.startsWith('answered'))).toBe(true);
    expect([...outcomes.keys()].some((k) => k === 'batch refused' || k.startsWith('429'))).toBe(true);
  });
});
