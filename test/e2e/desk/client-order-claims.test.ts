// A clientOrderId whose place timed out (issue 37 item 4, ADR 0320): the claim settles from what the
// engine's events say and never outlives the place's signature window plus CLIENT_ORDER_CLAIM_MARGIN_MS,
// and the status route says what a retried place says at every step: `pending` (200 on the status
// route, 409 with the same order on the place), then the order, or 404 and a retry that places.
// The reference engine sits behind a small proxy that, for POST /v1/orders only, sends the place on
// late (after the gateway's ENGINE_TIMEOUT_MS: the engine takes it, its events tell, its answer goes
// nowhere) or never; everything else, the event stream included, passes through.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/eventually.js';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { deskTrader, engineOpenOrders } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { fleetServices, REDIS_URL, uniqueName, waitFor } from '../../support/fleet.js';
import { fileScope, testEngine, testGateway, testLiveGateway, type Scope } from '../../support/stacks.js';
import { GatewayClient, GatewayError, requestMessage, type Session } from '../../../packages/client/src/index.js';

const MARKET = 'BTC-PERP';
const MARGIN_MS = 2_000;
const ENGINE_TIMEOUT_MS = 400;
const LATE_MS = 2_500;

type Mode = 'pass' | 'late' | 'drop';

/** The engine behind a proxy that can delay or swallow places (above). */
interface EngineFront {
  url: string;
  mode: Mode;
  /** Places the proxy swallowed (never sent to the engine). */
  dropped: number;
  close(): Promise<void>;
}

/** The proxy in front of an engine, closed with `scope` (after what is started on it later, before the engine). */
async function testEngineFront(scope: Scope, engineUrl: string): Promise<EngineFront> {
  const front = await engineFront(engineUrl);
  scope.onTestFinished(() => front.close());
  return front;
}

async function engineFront(engineUrl: string): Promise<EngineFront> {
  const target = new URL(engineUrl);
  const front = { mode: 'pass' as Mode, dropped: 0 };
  const held = new Set<IncomingMessage>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const isPlace = req.method === 'POST' && req.url === '/v1/orders';
      const mode = isPlace ? front.mode : 'pass';
      if (mode === 'drop') {
        // Never sent on: the gateway times out, the engine never hears of it.
        front.dropped++;
        held.add(req);
        req.socket.on('close', () => held.delete(req));
        return;
      }
      if (mode === 'late') {
        // Late: the engine gets the order only once the gateway has given up on it (504); it takes
        // it then, and its events tell. Its answer goes back to a connection the gateway closed.
        setTimeout(() => {
          const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
            answer.resume();
            res.destroy();
          });
          up.on('error', () => res.destroy());
          up.end(Buffer.concat(chunks));
        }, LATE_MS);
        return;
      }
      const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(front, {
    url,
    async close() {
      for (const r of held) r.socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

const body = (clientOrderId: string, price = '41000'): string => JSON.stringify({ market: MARKET, side: 'buy', type: 'limit', size: '0.01', price, clientOrderId });

/** A place signed at `ts` (default: now), sent as is: status and JSON body. */
async function place(url: string, session: Session, raw: string, ts?: number): Promise<{ status: number; body: Record<string, unknown> }> {
  const t = ts ?? (await session.nextTs());
  const sig = await session.signature(requestMessage('POST', '/v1/orders', t, raw));
  const r = await fetch(`${url}/v1/orders`, {
    method: 'POST',
    body: raw,
    headers: { 'content-type': 'application/json', 'x-user': session.party, 'x-session-id': session.sessionId, 'x-session-sig': `${t}.${sig}` },
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** The status route: status and JSON body. */
async function status(url: string, session: Session, clientOrderId: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const path = `/v1/users/${encodeURIComponent(session.party)}/orders/by-client-id/${encodeURIComponent(clientOrderId)}`;
  const r = await fetch(`${url}${path}`, { headers: { ...(await session.headers('GET', path, '')) } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/**
 * Both routes asked about the id, on the given gateway: while a claim is held the status says
 * pending and a retried place is refused 409 with the very same order (and settlesBy); once known,
 * the same order; once free, 404 on the status. The status is asked again after the retry: when it
 * moved in between (the events arrived, the claim settled), the step is `moving` and nothing is
 * compared; a retry that placed (the claim went between the two asks) is `placed`.
 */
async function agree(url: string, session: Session, clientOrderId: string): Promise<'pending' | 'known' | 'free' | 'moving' | 'placed'> {
  const s = await status(url, session, clientOrderId);
  if (s.status === 404) {
    expect(s.body).toMatchObject({ code: 'not_found' });
    return 'free';
  }
  expect(s.status).toBe(200);
  const retry = await place(url, session, body(clientOrderId, '40000'));
  if (retry.status === 200) {
    expect(retry.body).toMatchObject({ ok: true });
    return 'placed';
  }
  const after = await status(url, session, clientOrderId);
  const order = s.body.order as Record<string, unknown>;
  const orderAfter = after.body.order as Record<string, unknown> | undefined;
  if (after.status !== 200 || orderAfter?.status !== order.status || orderAfter?.orderId !== order.orderId) return 'moving';
  expect(retry.status).toBe(409);
  expect(retry.body).toMatchObject({ code: 'duplicate_client_order_id' });
  if (order.status === 'pending') {
    expect(s.body).toMatchObject({ source: 'claim', order: { clientOrderId, orderId: null, status: 'pending' } });
    expect(retry.body.order).toEqual(order);
    expect(Date.parse(String(s.body.settlesBy))).toBeGreaterThan(Date.now() - 1_000);
    expect(Math.abs(Date.parse(String(retry.body.settlesBy)) - Date.parse(String(s.body.settlesBy)))).toBeLessThan(1_000);
    return 'pending';
  }
  expect(retry.body.order).toMatchObject({ clientOrderId, orderId: order.orderId, status: order.status });
  return 'known';
}

/** Asks both routes until the id is free (or a retry placed it), past the bound at the latest: the steps seen, in order, without `moving`. */
async function untilSettled(urls: string[], session: Session, clientOrderId: string, signedAt: number): Promise<string[]> {
  const seen: string[] = [];
  return eventually(
    async () => {
      for (const url of urls) {
        const step = await agree(url, session, clientOrderId);
        if (step !== 'moving' && seen.at(-1) !== step) seen.push(step);
        // `known`: a retry of agree placed it once the claim went, its answer lost to this file's
        // short engine timeout (400 ms) on a loaded machine; settled all the same.
        if (step === 'free' || step === 'placed' || step === 'known') {
          // Never before the engine's window closed; within the bound (the wait's timeout, with the test's slack).
          expect(Date.now()).toBeGreaterThan(signedAt + 30_000);
          return seen;
        }
      }
      return null;
    },
    { timeoutMs: signedAt + 30_000 + MARGIN_MS + 1_000 - Date.now(), everyMs: 250, what: () => `${clientOrderId} settled (steps seen: ${seen.join(', ')})` },
  );
}

describe('a timed-out place settles its clientOrderId (one gateway, no Redis)', () => {
  let engine: RunningEngine;
  let front: EngineFront;
  let gw: TestGateway;
  let alice: GatewayClient;

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    front = await testEngineFront(file, engine.url);
    gw = await testLiveGateway(
      file,
      { url: front.url, adminToken: engine.adminToken },
      { ENGINE_TIMEOUT_MS: String(ENGINE_TIMEOUT_MS), CLIENT_ORDER_CLAIM_MARGIN_MS: String(MARGIN_MS), RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' },
    );
    alice = await deskTrader(gw.url, engine, 'alice');
  });

  it('timeout, then the engine\'s late success: pending on both routes, then the placed order on both; the engine holds one', async () => {
    const session = alice.session!;
    front.mode = 'late';
    const first = await place(gw.url, session, body('late-1'));
    front.mode = 'pass';
    expect(first).toMatchObject({ status: 504, body: { code: 'engine_timeout' } });
    // Before the engine's late answer and events: both routes say pending.
    expect(await agree(gw.url, session, 'late-1')).toBe('pending');
    // The engine took it: its events reach the live path, and both routes name the order.
    await waitFor(async () => (await agree(gw.url, session, 'late-1')) === 'known', 10_000, 'the order known');
    const s = await status(gw.url, session, 'late-1');
    const open = (await engineOpenOrders(engine, session.party)).filter((o) => o.clientOrderId === 'late-1');
    expect(open).toHaveLength(1);
    expect(s.body).toMatchObject({ source: 'live', order: { clientOrderId: 'late-1', orderId: open[0]!.orderId, status: 'open' } });
  });

  it('an id freed by a rejection, placed again and timed out: pending on both routes (not the old rejection), then the order', async () => {
    const session = alice.session!;
    expect(await place(gw.url, session, body('rej-late', '41000.123456'))).toMatchObject({ status: 200, body: { ok: false, code: 'invalid_price' } });
    await waitFor(async () => ((await status(gw.url, session, 'rej-late')).body.order as { status?: string } | undefined)?.status === 'rejected', 5_000, 'the rejection known');
    front.mode = 'late';
    expect(await place(gw.url, session, body('rej-late'))).toMatchObject({ status: 504 });
    front.mode = 'pass';
    expect(await agree(gw.url, session, 'rej-late')).toBe('pending');
    await waitFor(async () => ((await status(gw.url, session, 'rej-late')).body.order as { status?: string }).status === 'open', 10_000, 'the order known');
    expect(await agree(gw.url, session, 'rej-late')).toBe('known');
  });

  it('timeout, the engine never had it: pending on both routes until the bound, then 404 and a retry places', async () => {
    const session = alice.session!;
    front.mode = 'drop';
    // Signed 26 s ago (the engine still accepts it for 4 s): the bound is 4 s + the margin away.
    const signedAt = Date.now() - 26_000;
    const first = await place(gw.url, session, body('lost-1'), signedAt);
    front.mode = 'pass';
    expect(first).toMatchObject({ status: 504, body: { code: 'engine_timeout' } });
    expect(front.dropped).toBe(1);
    const seen = await untilSettled([gw.url], session, 'lost-1', signedAt);
    expect(seen[0]).toBe('pending');
    // Settled from the engine's events (the live path held the engine's head: no such order), not left to lapse.
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/bff_client_order_claims_settled_total\{outcome="not_placed"\} 1\b/);
    // Free: a retry places it (unless the last retry of untilSettled already did, the moment the claim went).
    if (seen.at(-1) === 'free') expect(await place(gw.url, session, body('lost-1'))).toMatchObject({ status: 200, body: { ok: true, status: 'open' } });
    expect(seen.slice(1)).toHaveLength(1);
    expect((await engineOpenOrders(engine, session.party)).filter((o) => o.clientOrderId === 'lost-1')).toHaveLength(1);
  });

  it('the client\'s placeOrder after a timeout: the late order is its answer; an order still pending is order_outcome_unknown saying so', async () => {
    const session = alice.session!;
    const client = new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 }, unknownOutcomeWaitMs: 8_000 });
    client.session = session;
    front.mode = 'late';
    const answer = await client.placeOrder({ market: MARKET, side: 'buy', type: 'limit', size: '0.01', price: '41100', clientOrderId: 'late-client' });
    front.mode = 'pass';
    const open = (await engineOpenOrders(engine, session.party)).find((o) => o.clientOrderId === 'late-client');
    expect(answer).toMatchObject({ ok: true, orderId: open!.orderId, status: 'open' });

    const impatient = new GatewayClient({ baseUrl: gw.url, retry: { retries: 0 }, unknownOutcomeWaitMs: 500 });
    impatient.session = session;
    front.mode = 'drop';
    const err = await impatient.placeOrder({ market: MARKET, side: 'buy', type: 'limit', size: '0.01', price: '41200', clientOrderId: 'lost-client' }).catch((e: unknown) => e);
    front.mode = 'pass';
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).body).toMatchObject({ code: 'order_outcome_unknown', firstCode: 'engine_timeout' });
    expect((err as GatewayError).body.settlesBy).toEqual(expect.any(String));
    expect(String((err as GatewayError).body.error)).toContain('pending');
  });
});

describe('a timed-out place settles its clientOrderId without a live path', () => {
  it('the engine took it late: at the bound the engine\'s open orders turn the claim into the order; both routes say it', async (ctx) => {
    const engine = await testEngine(ctx);
    const front = await testEngineFront(ctx, engine.url);
    // No live runtime, no database: only the engine's open orders (its admin route) can tell.
    const bare = await testGateway(
      ctx,
      { ENGINE_BASE_URL: front.url, ENGINE_ADMIN_TOKEN: engine.adminToken, ENGINE_TIMEOUT_MS: String(ENGINE_TIMEOUT_MS), CLIENT_ORDER_CLAIM_MARGIN_MS: String(MARGIN_MS), RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' },
      { listen: true, overrides: { live: null } },
    );
    const dave = await deskTrader(bare.url, engine, 'dave');
    const session = dave.session!;
    front.mode = 'late';
    // Signed 22 s ago: the front hands the order on LATE_MS after it, so the engine takes it with
    // about 5 s of its 30 s window left (26 s left 1.5 s, which a loaded machine's stall used up:
    // the engine refused it as expired, and the gateway rightly said free).
    const signedAt = Date.now() - 22_000;
    expect(await place(bare.url, session, body('late-bare'), signedAt)).toMatchObject({ status: 504 });
    front.mode = 'pass';
    const seen: string[] = [];
    const bound = signedAt + 30_000 + MARGIN_MS + 1_000;
    await eventually(
      async () => {
        const step = await agree(bare.url, session, 'late-bare');
        if (step !== 'moving' && seen.at(-1) !== step) seen.push(step);
        expect(step).not.toBe('free');
        expect(Date.now()).toBeLessThan(bound);
        return step === 'known';
      },
      { timeoutMs: bound - Date.now(), everyMs: 250, what: () => `late-bare known (steps seen: ${seen.join(', ')})` },
    );
    expect(seen).toEqual(['pending', 'known']);
    const open = (await engineOpenOrders(engine, session.party)).filter((o) => o.clientOrderId === 'late-bare');
    expect(open).toHaveLength(1);
    expect((await status(bare.url, session, 'late-bare')).body).toMatchObject({ source: 'claim', order: { clientOrderId: 'late-bare', orderId: open[0]!.orderId, status: 'open' } });
    expect(await (await fetch(`${bare.url}/metrics`)).text()).toMatch(/bff_client_order_claims_settled_total\{outcome="engine"\} 1\b/);
  });
});

describe('a timed-out place settles its clientOrderId across two gateways on one Redis', async () => {
  const ok = await fleetServices({ redis: true });
  it.skipIf(!ok)('placed through A: B says pending while A waits, then the order (late) or 404 and a retry on B places (never sent)', async (ctx) => {
    const engine = await testEngine(ctx);
    const front = await testEngineFront(ctx, engine.url);
    const env = {
      REDIS_URL,
      REDIS_PREFIX: `${uniqueName('coidclaim')}:`,
      ENGINE_TIMEOUT_MS: String(ENGINE_TIMEOUT_MS),
      CLIENT_ORDER_CLAIM_MARGIN_MS: String(MARGIN_MS),
      RATE_LIMIT_MAX: '100000',
      RATE_LIMIT_IP_MAX: '100000',
    };
    const a = await testLiveGateway(ctx, { url: front.url, adminToken: engine.adminToken }, env);
    const b = await testLiveGateway(ctx, { url: front.url, adminToken: engine.adminToken }, env);
    const onA = await deskTrader(a.url, engine, 'carol');
    const session = onA.session!;
    // B learns the session from the engine's events.
    await waitFor(async () => (await status(b.url, session, 'warm-up')).status === 404, 5_000, 'B knows the session');

    front.mode = 'late';
    expect(await place(a.url, session, body('late-2'))).toMatchObject({ status: 504 });
    front.mode = 'pass';
    expect(await agree(b.url, session, 'late-2')).toBe('pending');
    expect(await agree(a.url, session, 'late-2')).toBe('pending');
    await waitFor(async () => (await agree(b.url, session, 'late-2')) === 'known', 10_000, 'B knows the order');
    expect(await agree(a.url, session, 'late-2')).toBe('known');
    expect((await engineOpenOrders(engine, session.party)).filter((o) => o.clientOrderId === 'late-2')).toHaveLength(1);

    front.mode = 'drop';
    const signedAt = Date.now() - 26_000;
    expect(await place(a.url, session, body('lost-2'), signedAt)).toMatchObject({ status: 504 });
    front.mode = 'pass';
    const seen = await untilSettled([b.url, a.url], session, 'lost-2', signedAt);
    expect(seen[0]).toBe('pending');
    expect(seen.slice(1)).toHaveLength(1);
    if (seen.at(-1) === 'free') expect(await place(b.url, session, body('lost-2'))).toMatchObject({ status: 200, body: { ok: true } });
    // Free on both: neither says pending any more.
    for (const url of [a.url, b.url]) expect(((await status(url, session, 'lost-2')).body.order as { status?: string } | undefined)?.status).not.toBe('pending');
    expect((await engineOpenOrders(engine, session.party)).filter((o) => o.clientOrderId === 'lost-2')).toHaveLength(1);
  });
});
