// The fair share of the engine (docs/trading.md "A fair share of the engine", ADR 0210) against the
// reference engine over real HTTP: an address flooding batches of cancels of unknown orders from an
// unfunded party is held to its share (a batch past its room refused whole, items past it refused
// one by one, 429 budget_exhausted `engine_calls`), while another address's orders are answered.
import { beforeAll, describe, expect, it } from 'vitest';
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
    expect(r.headers['retry-after']).toBe('1');
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
