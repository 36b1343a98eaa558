// ENGINE_TIMEOUT_MS bounds the whole engine call, headers and body (docs/security.md): an engine
// that sends its headers and then trickles a byte every few hundred ms gets 504 `engine_timeout`
// at the deadline, and the pooled connection is given back (the trickling answer is abandoned),
// so a handful of such calls cannot fill ENGINE_CONNECTIONS and stall every later order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { waitFor } from '../../support/fleet.js';
import { okJson, startFakeEngine, type FakeEngine } from './fake-engine.js';

const TIMEOUT_MS = 800;

async function book(url: string): Promise<{ status: number; code?: string; ms: number }> {
  const started = Date.now();
  const res = await request(`${url}/v1/orderbook?market=BTC-PERP`);
  const body = (await res.body.json()) as { code?: string };
  return { status: res.statusCode, ms: Date.now() - started, ...(body.code ? { code: body.code } : {}) };
}

describe('an engine that trickles its answer', () => {
  let engine: FakeEngine;
  let gw: TestGateway;
  beforeAll(async () => {
    engine = await startFakeEngine();
    gw = await startGateway(
      { ENGINE_BASE_URL: engine.url, ENGINE_TIMEOUT_MS: String(TIMEOUT_MS), ENGINE_CONNECTIONS: '2', ORDERBOOK_SHARED_READS: 'false', HTTP_IDLE_TIMEOUT_MS: '30000' },
      { listen: true },
    );
  });
  afterAll(async () => {
    await gw.close();
    await engine.close();
  });

  it('answers 504 engine_timeout at the deadline and frees the connection', async () => {
    engine.respond = () => ({ trickleEveryMs: 200 });
    // Twice the pool: calls queued behind trickling ones are bounded by the same deadline.
    const answers = await Promise.all([1, 2, 3, 4].map(() => book(gw.url)));
    for (const a of answers) expect(a).toMatchObject({ status: 504, code: 'engine_timeout' });
    // Each answer came at its deadline (a queued call's deadline counts from its arrival), not
    // after the trickle: the trickle never ends.
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(TIMEOUT_MS * 4);
    // The gateway let go of every trickling answer it had started reading.
    await waitFor(() => engine.abandoned === engine.requests.length, 5_000, 'trickling answers abandoned');

    engine.respond = () => okJson({ market: 'BTC-PERP', seq: 1, depth: 20, bids: [], asks: [] });
    const after = await book(gw.url);
    expect(after.status).toBe(200);
  });
});
