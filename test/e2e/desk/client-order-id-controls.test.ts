// Control characters in a clientOrderId (NUL, CR, LF, DEL, C1) are refused 400 with a code wherever
// an id is read — the place body (alone, in a batch, in a replace), the status route's parameter,
// the socket's order.status — never 503 `database_unavailable` (PostgreSQL cannot hold a NUL in
// text: the mirror lookup failed), and without an error log line.
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Writable } from 'node:stream';
import pino from 'pino';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { deskTrader } from '../../support/desk.js';
import type { TestGateway } from '../../support/gateway.js';
import { fileScope, testEngine, testGateway } from '../../support/stacks.js';
import { waitFor } from '../../support/fleet.js';
import type { LiveRuntime } from '../../../src/live.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { GatewayError, orderByClientId, placeOrders, replaceOrder, StreamClient, type GatewayClient, type OrderRequest, type WebSocketCtor } from '../../../packages/client/src/index.js';

const CONTROLS = ['a\u0000b', 'nul\u0000', 'cr\rlf\n', 'lf\n', 'del\u007f', 'c1\u0085'];
const bid = (clientOrderId: string): OrderRequest => ({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '41000', clientOrderId });

describe('control characters in a clientOrderId', () => {
  let engine: RunningEngine;
  let db: TestDatabase;
  let gw: TestGateway;
  let alice: GatewayClient;
  const errors: string[] = [];
  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    db = await createTestDatabase();
    file.onTestFinished(() => db.drop());
    const logger = pino({ level: 'warn' }, new Writable({ write: (chunk, _enc, done) => (errors.push(String(chunk)), done()) }));
    gw = await testGateway(
      file,
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, DATABASE_URL: db.url, RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' },
      { listen: true, overrides: { logger } },
    );
    const live = gw.deps.live as LiveRuntime;
    await live.start();
    await waitFor(() => live.status().connected, 5_000, 'bridge');
    alice = await deskTrader(gw.url, engine, 'controls');
  });

  it('the status route: 400 with a code, not 503', async () => {
    for (const id of CONTROLS) {
      const answer = await orderByClientId(alice, id).catch((e: unknown) => e);
      expect(answer, JSON.stringify(id)).toBeInstanceOf(GatewayError);
      expect(answer, JSON.stringify(id)).toMatchObject({ status: 400, code: 'bad_request' });
    }
    // A plain unknown id is still 404 (null).
    expect(await orderByClientId(alice, 'plain-unknown')).toBeNull();
  });

  it('the socket\'s order.status: stream.error 400', async () => {
    const party = alice.session!.party;
    const stream = new StreamClient({ client: alice, kinds: ['order.update'], party: [party], WebSocket: WebSocket as unknown as WebSocketCtor, onMessage: () => undefined });
    stream.start();
    try {
      for (const id of CONTROLS) {
        const answer = await stream.ask('order.status', { party, clientOrderId: id }).catch((e: unknown) => e);
        expect(answer, JSON.stringify(id)).toMatchObject({ status: 400, code: 'bad_request' });
      }
    } finally {
      stream.stop();
    }
  });

  it('the place body, alone, in a batch and in a replace: 400 invalid_body naming clientOrderId, nothing sent', async () => {
    for (const id of CONTROLS) {
      const alone = await alice.placeOrder(bid(id)).catch((e: unknown) => e);
      expect(alone, JSON.stringify(id)).toMatchObject({ status: 400, code: 'invalid_body' });
      const batch = await placeOrders(alice, [bid(id)]);
      expect(batch.results[0]).toMatchObject({ outcome: 'refused', status: 400, body: { code: 'invalid_body', field: expect.stringContaining('clientOrderId') } });
    }
    const replaced = await replaceOrder(alice, 'o-none', bid('x\u0000'));
    expect(replaced).toMatchObject({ cancel: { outcome: 'skipped' }, place: { outcome: 'refused', status: 400 } });
  });

  it('logged no error', () => {
    expect(errors.filter((l) => /"level":50|database/.test(l))).toEqual([]);
  });
});
