// Review findings on the stream's contract: a spec-only client receives spec kinds only (control
// messages are opt-in), rule 1 is judged again when the market list loads after a client connected,
// and refused upgrades follow CORS_ORIGINS.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { A, simpleMatch, tick } from '../../unit/projections/fixtures.js';
import { connect, deliveredTo, refused, startStack, wsUrl, type Msg, type Stack } from './helpers.js';

const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

/** docs/stream.md: domain frames and engine passthrough kinds — written out here, independent of the source. */
const SPEC_KINDS = new Set([
  'position.update', 'balance.update', 'trade', 'orderbook.snapshot', 'candle.update', 'candle.close',
  'engine.tick_start', 'inbound.deposit', 'inbound.withdrawal_request', 'engine.approve_submitted', 'engine.reject_submitted',
  'session.authorized', 'inbound.order', 'engine.order_placed', 'engine.order_filled', 'engine.order_cancelled',
  'engine.order_rejected', 'engine.trigger_set', 'engine.trigger_cancelled', 'engine.trigger_fired', 'engine.attached_resolved',
  'engine.user_batch_committed', 'outbound.batch_committed',
]);
const offSpec = (messages: Msg[]) => messages.filter((m) => !SPEC_KINDS.has(m.kind) || !Number.isSafeInteger(m.seq));

describe('control messages are opt-in (docs/stream.md envelope: kind is one of section 6)', () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack();
    await s.engine.waitFor(() => s.engine.open === 1);
    await s.live.poller!.pollOnce();
  });
  afterAll(async () => s.close());

  it('a client that follows only the spec receives only spec kinds, every one with a seq', async () => {
    s.engine.books.set('BTC-PERP', { seq: 1, bids: [['100', '1']], asks: [['101', '2']] });
    const clients = [
      await connect(s.gw.url),
      await connect(s.gw.url, 'kinds=trade,engine.tick_start'),
      await connect(s.gw.url, 'markets=nope-perp'), // rule 1 applies: no control message either
      await connect(s.gw.url, `party=${A}&intervals=1m`),
      await connect(s.gw.url, 'control=false'),
    ];
    const m = simpleMatch(1, at(1), '100', '1');
    const t = tick(2, at(2));
    s.engine.push(m, t);
    await s.live.poller!.pollOnce(); // an order book snapshot too
    for (const c of clients) await c.waitFor((ms) => ms.some((x) => x.seq === 2));
    await deliveredTo(s, 2, ...clients);
    for (const c of clients) {
      expect(c.messages.length).toBeGreaterThan(0);
      expect(offSpec(c.messages)).toEqual([]);
      expect(c.schemaErrors).toEqual([]);
      c.ws.close();
    }
    expect(clients[0]!.messages.map((x) => x.kind)).toContain('orderbook.snapshot');
  });

  it('control=true opts in: stream.subscribed comes first; since implies it; control is validated', async () => {
    const c = await connect(s.gw.url, 'control=true&kinds=engine.tick_start');
    const r = await connect(s.gw.url, 'since=0&kinds=engine.tick_start');
    s.engine.push(tick(3, at(3)));
    await c.waitFor((ms) => ms.some((x) => x.seq === 3));
    await r.waitFor((ms) => ms.some((x) => x.seq === 3));
    expect(c.messages.map((x) => x.kind)).toEqual(['stream.subscribed', 'engine.tick_start']);
    expect(c.messages[0]).toMatchObject({ payload: { kinds: ['engine.tick_start'], since: null } });
    expect(r.messages[0]).toMatchObject({ kind: 'stream.subscribed', payload: { since: 0 } });
    for (const x of [c, r]) x.ws.close();
    expect(await refused(s.gw.url, 'control=yes')).toEqual({ status: 400, body: { code: 'bad_request', error: expect.stringContaining('"control" must be true or false') } });
    expect((await refused(s.gw.url, 'control=true&control=false')).status).toBe(400);
  });

  it('the AsyncAPI document states the opt-in rule and the control parameter', async () => {
    const doc = (await (await fetch(`${s.gw.url}/docs/asyncapi.json`)).json()) as any;
    expect(doc.info.description).toContain('`control=true`');
    expect(doc.channels.stream.bindings.ws.query.properties.control).toMatchObject({ enum: ['true', 'false'] });
    expect(doc.components.messages.streamSubscribed.summary).toContain('opt-in');
  });

  it('the AsyncAPI document is readable at /docs/stream: every message with its fields, linked from /docs', async () => {
    const doc = (await (await fetch(`${s.gw.url}/docs/asyncapi.json`)).json()) as any;
    const page = await fetch(`${s.gw.url}/docs/stream`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    for (const m of Object.values(doc.components.messages) as Array<{ name: string }>) expect(html).toContain(`<h3>${m.name}</h3>`);
    expect(html).toContain('<code>matchId</code>'); // a payload field of the trade frame
    expect(html).toContain('<code>depth</code>'); // a query parameter of the connection
    expect(html).not.toContain('<script');
    const openapi = (await (await fetch(`${s.gw.url}/docs/json`)).json()) as any;
    expect(openapi.info.description).toContain('(/docs/stream)');
  });
});

describe('rule 1 for connections opened before the market list is known', () => {
  let s: Stack | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('a misspelled markets filter is dropped once the list loads, and the client then receives every market', async () => {
    s = await startStack({}, { start: false });
    s.engine.marketsFailStatus = 503; // the engine cannot list its markets yet
    s.engine.markets = [
      { symbol: 'BTC-PERP', status: 'active' },
      { symbol: 'ETH-PERP', status: 'active' },
    ];
    await s.live.start();
    await s.engine.waitFor(() => s!.engine.open === 1);
    await s.live.poller!.pollOnce();
    expect(s.live.knownMarkets()).toBeNull();

    const typo = await connect(s.gw.url, 'markets=btc-perp&kinds=trade');
    const typoControl = await connect(s.gw.url, 'markets=btc-perp&kinds=trade&control=true');
    const eth = await connect(s.gw.url, 'markets=ETH-PERP&kinds=trade'); // a real market: stays narrowed
    await typoControl.waitFor((m) => m.length > 0);
    expect(typoControl.messages[0]).toMatchObject({ kind: 'stream.subscribed', payload: { markets: ['btc-perp'], marketsIgnored: false } });

    s.engine.marketsFailStatus = null;
    await s.live.poller!.pollOnce(); // the list loads: BTC-PERP, ETH-PERP
    expect(s.live.knownMarkets()).toEqual(new Set(['BTC-PERP', 'ETH-PERP']));

    s.engine.push(simpleMatch(1, at(1), '100', '1'), simpleMatch(2, at(2), '7', '1', 'ETH-PERP'));
    await typo.waitFor((ms) => ms.some((x) => x.seq === 2));
    await eth.waitFor((ms) => ms.some((x) => x.seq === 2));
    await deliveredTo(s, 2, typo, typoControl, eth);
    expect(typo.frames().map((f) => `${f.seq}:${f.kind}@${f.market}`)).toEqual(['1:trade@BTC-PERP', '2:trade@ETH-PERP']);
    expect(eth.frames().map((f) => `${f.seq}:${f.kind}@${f.market}`)).toEqual(['2:trade@ETH-PERP']);
    // The opted-in client is told the filters in effect changed.
    expect(typoControl.messages.filter((x) => x.kind === 'stream.subscribed').map((x) => x.payload)).toEqual([
      expect.objectContaining({ markets: ['btc-perp'], marketsIgnored: false, epoch: 'empty' }),
      expect.objectContaining({ markets: null, marketsIgnored: true, epoch: 'empty' }),
      // The engine's history was empty: its first event names the epoch, and the client is told.
      expect.objectContaining({ markets: null, marketsIgnored: true, headSeq: 1, epoch: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/) }),
    ]);
    expect(typoControl.frames().map((f) => f.seq)).toEqual([1, 2]);
    for (const c of [typo, typoControl, eth]) {
      expect(c.schemaErrors).toEqual([]);
      c.ws.close();
    }
  });
});

/** The headers of a refused upgrade. */
async function refusalHeaders(gatewayUrl: string, query: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  const ws = new WebSocket(wsUrl(gatewayUrl, query), { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.terminate();
      reject(new Error('upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    ws.once('error', () => {});
  });
}

describe('refused upgrades follow CORS_ORIGINS', () => {
  it('echoes an allowed Origin, sends none for another origin or no Origin', async () => {
    const s = await startStack({ CORS_ORIGINS: 'https://app.example,http://localhost:3000' }, { start: false });
    try {
      const ok = await refusalHeaders(s.gw.url, 'kinds=nope', { origin: 'https://app.example' });
      expect(ok.status).toBe(400);
      expect(ok.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(ok.headers.vary).toBe('Origin');
      const other = await refusalHeaders(s.gw.url, 'kinds=nope', { origin: 'https://evil.example' });
      expect(other.status).toBe(400);
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
      const none = await refusalHeaders(s.gw.url, 'kinds=nope');
      expect(none.headers['access-control-allow-origin']).toBeUndefined();
      // The HTTP routes agree.
      const http = await fetch(`${s.gw.url}/healthz`, { headers: { origin: 'https://evil.example' } });
      expect(http.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await s.close();
    }
  });

  it('sends * when CORS_ORIGINS lists *', async () => {
    const s = await startStack({ CORS_ORIGINS: '*' }, { start: false });
    try {
      const r = await refusalHeaders(s.gw.url, 'kinds=nope', { origin: 'https://anything.example' });
      expect(r.status).toBe(400);
      expect(r.headers['access-control-allow-origin']).toBe('*');
    } finally {
      await s.close();
    }
  });
});
