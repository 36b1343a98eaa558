// Distinct `tick:` book groupings are bounded for the whole process (src/stream/tick-groupings.ts,
// docs/stream.md "Order book deltas"): past MAX_TICK_GROUPINGS held by connections, a new one is
// refused 400 `too_many_subscriptions` at the upgrade and `stream.error` on a subscribe; one already
// held is still served, and a grouping is free again once its connections closed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MAX_TICK_GROUPINGS } from '../../../src/stream/tick-groupings.js';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, startStack, wsUrl, type Stack } from './helpers.js';

function refusal(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('open', () => reject(new Error('opened')));
    ws.once('error', () => undefined);
  });
}

describe('distinct tick: groupings', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ WS_MAX_CONNECTIONS_PER_IP: '0', HTTP_MAX_CONNECTIONS_PER_IP: '0' });
  });
  afterAll(async () => s?.close());

  it('refuses a new one past the bound, serves the held ones, frees them on close', async () => {
    const view = (t: number) => `kinds=orderbook.delta&markets=BTC-PERP&group=tick:${t}`;
    const held = [];
    for (let t = 1; t <= MAX_TICK_GROUPINGS; t++) held.push(await connect(s.gw.url, view(t)));
    expect(await refusal(wsUrl(s.gw.url, view(MAX_TICK_GROUPINGS + 1)))).toBe(400);
    const again = await connect(s.gw.url, view(1));
    // On a subscribe: the new grouping is refused, the connection stays.
    again.ws.send(JSON.stringify({ op: 'subscribe', id: 's1', kinds: ['orderbook.delta'], group: `tick:${MAX_TICK_GROUPINGS + 2}` }));
    await again.waitFor((ms) => ms.some((m) => (m as { id?: unknown }).id === 's1'));
    expect(again.messages.find((m) => (m as { id?: unknown }).id === 's1')).toMatchObject({ kind: 'stream.error', payload: { code: 'too_many_subscriptions' } });
    for (const c of [...held, again]) c.ws.close();
    await waitFor(() => (s.live.queries.books?.ticks.size ?? -1) === 0, 5_000, 'the groupings freed');
    const later = await connect(s.gw.url, view(MAX_TICK_GROUPINGS + 1));
    later.ws.close();
  });
});
