// The socket's client messages under attack (docs/stream.md "Talking to the socket"), over a real
// WebSocket against the reference engine: inputs that once got no answer or a wrong one. Every
// message gets a coded answer, whenever it is sent, and a bad input is the client's error (4xx),
// never the engine's (5xx).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEngine, type RunningEngine } from '../../../sandbox/engine/index.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { LiveRuntime } from '../../../src/live.js';
import { connect, type Msg, type TestClient } from '../../integration/stream/helpers.js';

type Answer = Msg & { id: unknown; op: unknown };
const isAnswer = (m: Msg): boolean => m.kind === 'stream.ack' || m.kind === 'stream.error' || m.kind === 'stream.answer';

/** Sends a message and resolves with the answer carrying its id. */
async function ask(c: TestClient, message: Record<string, unknown>, timeoutMs = 5_000): Promise<Answer> {
  const before = c.messages.length;
  c.ws.send(JSON.stringify(message));
  const mine = (m: Msg) => isAnswer(m) && (m as Answer).id === message.id;
  await c.waitFor((ms) => ms.slice(before).some(mine), timeoutMs);
  return c.messages.slice(before).find(mine) as Answer;
}

describe('messages sent before the runtime is ready (clients connect before it starts)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;

  beforeAll(async () => {
    engine = await startEngine({ port: 0, tickMs: 0, commitMs: 0 });
    gw = await startGateway({ ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken }, { listen: true });
  });
  afterAll(async () => {
    await gw?.close();
    await engine?.close();
  });

  it('are answered at once, not dropped; the connection then opens as usual', { timeout: 30_000 }, async () => {
    const live = gw.deps.live as LiveRuntime;
    // Not started: the epoch is not known, the connection's opening waits for it.
    const c = await connect(gw.url, 'kinds=trade&control=true');
    c.ws.send('not json');
    const malformed = c.messages.length;
    await c.waitFor((ms) => ms.some((m) => m.kind === 'stream.error' && (m as Answer).id === null), 3_000);
    expect(c.messages[malformed]).toMatchObject({ kind: 'stream.error', payload: { code: 'bad_request' } });
    // An order (here unsigned) is answered as REST answers it, while the stream has sent nothing else.
    const unsigned = await ask(c, { op: 'order.place', id: 'early', body: '{"market":"BTC-PERP"}' }, 3_000);
    expect(unsigned).toMatchObject({ kind: 'stream.error', op: 'order.place', payload: { code: 'unauthorized', status: 401 } });
    expect(c.messages.every((m) => m.kind === 'stream.error')).toBe(true);

    // Once the runtime is ready the opening runs (stream.subscribed) and subscriptions are acked.
    await live.start();
    await c.waitFor((ms) => ms.some((m) => m.kind === 'stream.subscribed'), 10_000);
    const ack = await ask(c, { op: 'subscribe', id: 'later', kinds: ['candle.close'] });
    expect(ack).toMatchObject({ kind: 'stream.ack', payload: { kinds: ['trade', 'candle.close'] } });
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });
});
