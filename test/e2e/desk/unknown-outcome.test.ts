// A place whose answer is lost (docs/trading.md "Unknown outcome"), against the reference engine and
// a live gateway, with a fault in front of the gateway as a dying replica would make it: the order
// reaches the engine and its answer never reaches the client (the connection dropped, or nginx's 502
// in its place), or the request is lost before the gateway. placeOrder with a clientOrderId looks
// the order up before it answers: the placed order's outcome, or `order_outcome_unknown` when no
// order was placed (and placing it again then places it once). Without a clientOrderId the error
// stays the caller's.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { deskTrader, engineOpenOrders } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { GatewayClient, GatewayError, type OrderRequest } from '../../../packages/client/src/index.js';
import { fileScope, testEngine, testLiveGateway } from '../../support/stacks.js';

type Fault = 'none' | 'drop-answer' | 'answer-502' | 'lose-request' | 'answer-503-coded';
const NGINX_502 = JSON.stringify({ error: 'no gateway replica could be reached; retry shortly', code: 'replica_unavailable' });

/** A proxy in front of the gateway that applies `fault` to the next POST /v1/orders. */
async function faultyProxy(target: string): Promise<{ url: string; fault: Fault; forwarded: number; close(): Promise<void> }> {
  const state = { url: '', fault: 'none' as Fault, forwarded: 0, close: async () => {} };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const fault = req.method === 'POST' && req.url === '/v1/orders' ? state.fault : 'none';
        if (fault !== 'none') state.fault = 'none';
        if (fault === 'lose-request') return void res.writeHead(502, { 'content-type': 'application/json' }).end(NGINX_502);
        if (fault === 'answer-503-coded') return void res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'shared state unavailable', code: 'shared_state_unavailable' }));
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'connection' && k !== 'content-length') headers[k] = v;
        const body = chunks.length ? Buffer.concat(chunks) : undefined;
        const answer = await fetch(target + req.url, { method: req.method!, headers, body: body ?? null });
        const text = await answer.text();
        if (req.url === '/v1/orders') state.forwarded++;
        if (fault === 'drop-answer') return void req.socket.destroy();
        if (fault === 'answer-502') return void res.writeHead(502, { 'content-type': 'application/json' }).end(NGINX_502);
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  state.close = () => new Promise<void>((r) => server.close(() => r()));
  return state;
}

const bid = (price: string, clientOrderId?: string): OrderRequest => ({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price, ...(clientOrderId ? { clientOrderId } : {}) });

describe('placeOrder after an answer that leaves the outcome unknown', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let proxy: Awaited<ReturnType<typeof faultyProxy>>;
  let alice: GatewayClient;
  const mine = async (id: string) => (await engineOpenOrders(engine, alice.session!.party)).filter((o) => o.clientOrderId === id);

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    gw = await testLiveGateway(file, engine, { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' });
    proxy = await faultyProxy(gw.url);
    file.onTestFinished(() => proxy.close()); // closed first
    alice = await deskTrader(proxy.url, engine, 'unknown-outcome');
  });

  it.each([
    ['the connection dropped after the request was sent', 'drop-answer', 'uo-drop'],
    ["nginx's 502 instead of the answer", 'answer-502', 'uo-502'],
  ] as const)('%s: the placed order is found by its clientOrderId and answered', async (_name, fault, id) => {
    proxy.fault = fault;
    const placed = await alice.placeOrder(bid('40000', id));
    const [held] = await mine(id);
    expect(held).toBeDefined();
    expect(placed).toEqual({ ok: true, orderId: held!.orderId, status: 'open', filledSize: expect.any(String), avgPrice: null });
  });

  it('the request lost before the gateway: order_outcome_unknown, nothing placed; placing it again places it once', async () => {
    proxy.fault = 'lose-request';
    const forwarded = proxy.forwarded;
    const client = new GatewayClient({ baseUrl: proxy.url, retry: { retries: 0 }, unknownOutcomeWaitMs: 500 });
    client.session = alice.session;
    const err = (await client.placeOrder(bid('40001', 'uo-lost')).catch((e: unknown) => e)) as GatewayError;
    expect(err).toBeInstanceOf(GatewayError);
    expect(err.status).toBe(502);
    expect(err.body).toMatchObject({ code: 'order_outcome_unknown', firstCode: 'replica_unavailable' });
    expect(proxy.forwarded).toBe(forwarded);
    expect(await mine('uo-lost')).toHaveLength(0);
    expect(await client.placeOrder(bid('40001', 'uo-lost'))).toMatchObject({ ok: true, status: 'open' });
    expect(await mine('uo-lost')).toHaveLength(1);
  });

  it('without a clientOrderId, or after a 503 with a code (nothing sent), the error is the answer', async () => {
    proxy.fault = 'answer-502';
    const noId = (await alice.placeOrder(bid('40002')).catch((e: unknown) => e)) as GatewayError;
    expect(noId.body).toMatchObject({ code: 'replica_unavailable' });
    proxy.fault = 'answer-503-coded';
    const coded = (await alice.placeOrder(bid('40003', 'uo-503')).catch((e: unknown) => e)) as GatewayError;
    expect(coded.body).toMatchObject({ code: 'shared_state_unavailable' });
  });
});
