// Signed calls through nginx on connections left idle about as long as the replica keeps them (issue
// 40): nginx closes an idle connection to a replica after proxyIdleTimeoutMs of the replica's
// keep-alive timeout (deploy/nginx.ts), so it never writes a request on one the replica is closing,
// which a signed call, sent once, would get back as nginx's 502. A shortened keep-alive (2 s), with
// nginx's timeout derived by the shipped rule, so the test runs in seconds: bursts of signed orders
// after idle gaps just short of and just past each closing moment, 0 answers but 200.
// With nginx's own default (60 s, the template before the rule) the same test gets 502s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeyPair, makeParty, signHex } from '../../sandbox/engine/helpers.js';
import { burstsAfterIdleGaps, closedPort, fleetServices, idleGapsAround, startLiveReplicas, startOrderTakingEngine } from '../../support/fleet.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import type { ScriptedEngine } from '../../support/scripted-sse.js';
import { proxyIdleTimeoutMs, startNginx, type RunningNginx } from '../../../deploy/nginx.js';
import { ticks } from '../../integration/stream/helpers.js';

const available = await fleetServices({ nginx: true });

const KEEP_ALIVE_MS = 2_000;
const BURST = 40;
const party = makeParty('idleconn');
const key = generateKeyPair();
const sessionId = `sess-idle-conn-${process.pid}`;
let lastTs = 0;
const ORDER = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', price: '100.0000000000', size: '1.0000000000' });

function signedOrder(): Record<string, string> {
  lastTs = Math.max(lastTs + 1, Date.now());
  return { 'x-user': party.id, 'x-session-id': sessionId, 'x-session-sig': `${lastTs}.${signHex(key.privateKey, `POST\n/v1/orders\n${lastTs}\n${ORDER}`)}`, 'content-type': 'application/json' };
}

describe.skipIf(!available)('nginx never writes a signed call on a connection its replica is closing', () => {
  let engine: ScriptedEngine;
  let nginx: RunningNginx;
  let orderSigs: string[] = [];
  const gws: TestGateway[] = [];

  beforeAll(async () => {
    ({ engine, orderSigs } = await startOrderTakingEngine());
    engine.push(...ticks(1, 5));
    const env = {
      ENGINE_BASE_URL: engine.url,
      ENGINE_ADMIN_TOKEN: engine.token,
      WS_ORDERBOOK_POLL_MS: '60000',
      TRUST_PROXY: '127.0.0.1',
      HTTP_MAX_CONNECTIONS_PER_IP: '0',
      RATE_LIMIT_MAX: '1000000',
      RATE_LIMIT_IP_MAX: '1000000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
    };
    gws.push(...(await startLiveReplicas(2, () => startGateway(env, { listen: true }), { id: sessionId, party: party.id, publicKeyHex: key.publicKeyHex })));
    nginx = await startNginx({ listen: `127.0.0.1:${await closedPort()}`, upstreams: gws.map((g) => new URL(g.url).host), replicaKeepAliveMs: KEEP_ALIVE_MS });
  }, 60_000);

  afterAll(async () => {
    await nginx?.stop();
    for (const g of gws) await g.close();
    await engine?.close();
  });

  it(`bursts of ${BURST} signed orders after idle gaps around each closing moment: every one answered 200, none 502`, async () => {
    const place = async (): Promise<string> => {
      try {
        const res = await fetch(`${nginx.url}/v1/orders`, { method: 'POST', headers: signedOrder(), body: ORDER, signal: AbortSignal.timeout(10_000) });
        const body = (await res.json()) as { code?: string };
        return body.code ? `${res.status} ${body.code}` : String(res.status);
      } catch (err) {
        return `network error: ${(err as Error).message}`;
      }
    };
    const gaps = idleGapsAround(KEEP_ALIVE_MS, proxyIdleTimeoutMs(KEEP_ALIVE_MS));
    const before = orderSigs.length;
    const answers = await burstsAfterIdleGaps(gaps, () => Promise.all(Array.from({ length: BURST }, place)));
    const tally: Record<string, number> = {};
    for (const a of answers) tally[a] = (tally[a] ?? 0) + 1;
    console.log(`[idle connections] ${answers.length} signed orders after gaps ${gaps.join(', ')} ms: ${JSON.stringify(tally)}`);
    expect(answers.length).toBe((gaps.length + 1) * BURST);
    expect(tally).toEqual({ '200': answers.length });
    expect(orderSigs.length - before).toBe(answers.length);
  }, 120_000);
});
