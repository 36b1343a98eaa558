// The socket's client messages under attack (docs/stream.md "Talking to the socket"), over a real
// WebSocket against the reference engine: inputs that once got no answer or a wrong one. Every
// message gets a coded answer, whenever it is sent, and a bad input is the client's error (4xx),
// never the engine's (5xx).
import http from 'node:http';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { faucet, fundedClient, makeParty, signHex, SigningClient } from '../../sandbox/engine/helpers.js';
import type { TestGateway } from '../../support/gateway.js';
import { fileScope, testEngine, testGateway, type Scope } from '../../support/stacks.js';
import { waitFor } from '../../support/scripted-sse.js';
import { LiveRuntime } from '../../../src/live.js';
import { connect, wsUrl, type Msg, type TestClient } from '../../integration/stream/helpers.js';

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

/** The reference engine and a listening gateway on it, the live runtime started and streaming; closed with `scope`. */
interface Stack {
  engine: RunningEngine;
  gw: TestGateway;
  live: LiveRuntime;
}

async function startStack(scope: Scope, env: Record<string, string> = {}, options: { markets?: boolean } = {}): Promise<Stack> {
  const engine = await testEngine(scope);
  const gw = await testGateway(scope, { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, ...env }, { listen: true });
  const live = gw.deps.live as LiveRuntime;
  await live.start();
  await waitFor(() => live.status().connected, 5_000, 'bridge');
  if (options.markets) await waitFor(() => live.knownMarkets() !== null, 5_000, 'market list');
  return { engine, gw, live };
}

/** A party with a session on the gateway and collateral on the engine. */
async function fundedParty(stack: Stack, name: string): Promise<SigningClient> {
  const party = new SigningClient(stack.gw.url, makeParty(name));
  expect((await party.authorize()).body).toMatchObject({ ok: true });
  expect((await faucet(stack.engine.url, stack.engine.adminToken, party.id, '1000000')).body).toMatchObject({ ok: true });
  return party;
}

const TRADING_LIMITS = { RATE_LIMIT_MAX: '1000', RATE_LIMIT_IP_MAX: '10000' };

describe('messages sent before the runtime is ready (clients connect before it starts)', () => {
  let engine: RunningEngine;
  let gw: TestGateway;

  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    gw = await testGateway(file, { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken }, { listen: true });
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

describe('signing fields that no HTTP header could carry', () => {
  let stack: Stack;
  let gw: TestGateway;
  let alice: SigningClient;

  const file = fileScope();
  beforeAll(async () => {
    stack = await startStack(file, TRADING_LIMITS);
    gw = stack.gw;
    alice = await fundedParty(stack, 'alice');
  });

  it('are refused 400 bad_request (a client error), never forwarded and answered 502 engine_unavailable', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    const body = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '40000' });
    const h = alice.signHeaders('POST', '/v1/orders', body);
    const good = { user: h['x-user'], sessionId: h['x-session-id'], sig: h['x-session-sig'] };
    const cases: Array<[string, Record<string, unknown>]> = [
      ['CRLF in user', { op: 'order.place', body, ...good, user: `${alice.id}\r\nX-Evil: 1` }],
      ['LF in sessionId', { op: 'order.place', body, ...good, sessionId: `${alice.sessionId}\nx` }],
      ['NUL in sig', { op: 'order.place', body, ...good, sig: `${good.sig}\u0000` }],
      ['non-Latin-1 in sig', { op: 'order.place', body, ...good, sig: `${good.sig}€` }],
      ['CRLF in a cancel', { op: 'order.cancel', orderId: 'o-1', ...good, user: `${alice.id}\r\n` }],
      ['CRLF in a subscribe proof', { op: 'subscribe', party: [alice.id], ...good, sessionId: `${alice.sessionId}\r\n` }],
    ];
    for (const [name, message] of cases) {
      const a = await ask(c, { ...message, id: name });
      expect([a.kind, a.payload.code, a.payload.status], name).toEqual(['stream.error', 'bad_request', 400]);
    }
    // The engine was never called with them: no transport error counted for the order routes.
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).not.toMatch(/outcome="transport_error"/);
    // The same fields, well formed, still place the order.
    const placed = await ask(c, { op: 'order.place', id: 'fine', body, ...good });
    expect(placed).toMatchObject({ kind: 'stream.answer', payload: { status: 200, body: { ok: true } } });
    c.ws.close();
  });
});

describe('a subscribe that names no value', () => {
  let stack: Stack;
  let gw: TestGateway;
  let alice: SigningClient;
  let bob: SigningClient;

  const file = fileScope();
  beforeAll(async () => {
    stack = await startStack(file, TRADING_LIMITS, { markets: true });
    gw = stack.gw;
    alice = await fundedParty(stack, 'alice');
    bob = await fundedParty(stack, 'bob');
  });

  it('adds nothing: an empty list leaves the connection\'s filters (every kind, every market) as they were', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, '');
    // A client building its lists from an empty selection: the subscribe must not turn into "nothing".
    const ack = await ask(c, { op: 'subscribe', id: 'empty', kinds: [], markets: [], intervals: [] });
    expect(ack).toMatchObject({ kind: 'stream.ack', payload: { kinds: null, markets: null, intervals: null } });
    const before = c.messages.length;
    expect((await bob.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: '60000' })).body).toMatchObject({ ok: true });
    expect((await alice.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'market', size: '0.01' })).body).toMatchObject({ ok: true, status: 'filled' });
    await c.waitFor((ms) => ms.slice(before).some((m) => m.kind === 'trade' && m.market === 'BTC-PERP'));
    // A list that has values still adds only them.
    const listed = await ask(c, { op: 'subscribe', id: 'one', markets: ['ETH-PERP'], kinds: [] });
    expect(listed.payload).toMatchObject({ kinds: null, markets: ['ETH-PERP'] });
    expect(c.schemaErrors).toEqual([]);
    c.ws.close();
  });
});

describe('subscription changes while their snapshot reads are slow', () => {
  let engine: RunningEngine;
  let gw: TestGateway;
  let proxy: http.Server;
  let alice: SigningClient;
  /** While set, the engine's admin reads of a party's live orders (a user snapshot) get no answer. */
  let stall = false;
  const stalled: http.ServerResponse[] = [];

  // Closed after the afterAll below (registered later, run first), last started first: the gateway, the proxy, the engine.
  const file = fileScope();
  beforeAll(async () => {
    engine = await testEngine(file);
    const target = new URL(engine.url);
    // The engine behind a pass-through proxy that can hold the reads a user snapshot makes.
    proxy = http.createServer((req, res) => {
      if (stall && req.url?.startsWith('/v1/admin/users/')) {
        req.resume();
        stalled.push(res);
        return;
      }
      const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode!, r.headers);
        r.pipe(res);
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    file.onTestFinished(() => proxy.close());
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    gw = await testGateway(file, { ENGINE_BASE_URL: proxyUrl, ENGINE_ADMIN_TOKEN: engine.adminToken }, { listen: true });
    await (gw.deps.live as LiveRuntime).start();
    await waitFor(() => (gw.deps.live as LiveRuntime).status().connected, 5_000, 'bridge');
    alice = await fundedClient(gw.url, engine.adminToken, '1000', 'alice', engine.url);
    await waitFor(() => gw.deps.sessions.peek(alice.sessionId) !== undefined, 5_000, 'session learnt');
  });
  afterAll(() => {
    stall = false;
    for (const r of stalled) r.destroy();
  });

  it('are bounded per connection: past 32 waiting, one is refused at once (rate_limited), not queued without end', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    const ts = alice.nextTs();
    const proof = { user: alice.id, sessionId: alice.sessionId, sig: `${ts}.${signHex(alice.session.privateKey, `GET\n/v1/stream\n${ts}\n`)}` };
    expect(await ask(c, { op: 'subscribe', id: 'party', party: [alice.id], ...proof })).toMatchObject({ kind: 'stream.ack' });
    stall = true;
    // Each subscribe of order.update reads alice's live orders for its snapshot: the first one waits.
    const sent = 36; // within the inbound burst (40, one spent on the proof): none is a flood
    for (let i = 0; i < sent; i++) c.ws.send(JSON.stringify(i % 2 === 0 ? { op: 'subscribe', id: i, kinds: ['order.update'] } : { op: 'unsubscribe', id: i, kinds: ['order.update'] }));
    // The refused ones are the last sent: once sent − 32 are refused, every message was read.
    await c.waitFor((ms) => ms.filter((m) => m.kind === 'stream.error').length >= sent - 32, 3_000);
    const refused = c.messages.filter((m) => m.kind === 'stream.error');
    expect(refused.length).toBe(sent - 32);
    for (const r of refused) expect(r.payload).toMatchObject({ code: 'rate_limited', status: 429, retryAfterS: 1 });
    // Once the reads answer again, every change that was taken is acked, in order.
    stall = false;
    for (const r of stalled.splice(0)) r.destroy();
    await c.waitFor((ms) => ms.filter((m) => m.kind === 'stream.ack').length === 1 + 32, 15_000);
    const acked = c.messages.filter((m) => m.kind === 'stream.ack').slice(1).map((m) => (m as Answer).id);
    expect(acked).toEqual(Array.from({ length: 32 }, (_, i) => i));
    // And the connection takes changes again.
    expect(await ask(c, { op: 'subscribe', id: 'after', kinds: ['candle.close'] })).toMatchObject({ kind: 'stream.ack' });
    c.ws.close();
  });
});

describe('hostile frames and keys', () => {
  let stack: Stack;
  let gw: TestGateway;

  const file = fileScope();
  beforeAll(async () => {
    stack = await startStack(file);
    gw = stack.gw;
  });

  it('prototype keys are unknown fields; a binary message is read as text; the filters are untouched', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    for (const [id, raw] of [
      ['proto', '{"op":"subscribe","id":"proto","__proto__":{"kinds":["fill"]}}'],
      ['ctor', '{"op":"subscribe","id":"ctor","constructor":{"prototype":{"kinds":["fill"]}}}'],
    ] as const) {
      const before = c.messages.length;
      c.ws.send(raw);
      await c.waitFor((ms) => ms.slice(before).some((m) => (m as Answer).id === id));
      expect(c.messages.slice(before).find((m) => (m as Answer).id === id)).toMatchObject({ kind: 'stream.error', payload: { code: 'bad_request' } });
    }
    const before = c.messages.length;
    c.ws.send(Buffer.from(JSON.stringify({ op: 'subscribe', id: 'bin', kinds: ['candle.close'] })), { binary: true });
    await c.waitFor((ms) => ms.slice(before).some((m) => (m as Answer).id === 'bin'));
    expect(c.messages.slice(before).find((m) => (m as Answer).id === 'bin')).toMatchObject({ kind: 'stream.ack', payload: { kinds: ['trade', 'candle.close'] } });
    expect(({} as Record<string, unknown>).kinds).toBeUndefined();
    c.ws.close();
  });

  it('text that is not UTF-8 closes 1007, a protocol error 1002 (docs/stream.md close codes); the gateway carries on', { timeout: 30_000 }, async () => {
    const c = await connect(gw.url, 'kinds=trade');
    c.ws.send(Buffer.from([0x7b, 0xff, 0x7d]), { binary: false });
    expect((await c.closed).code).toBe(1007);

    // A client frame without a mask (RFC 6455 §5.1: the server must close), over a raw socket.
    const { port, hostname } = new URL(gw.url);
    const socket = net.connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    let received = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => (received = Buffer.concat([received, d])));
    socket.write('GET /v1/stream?kinds=trade HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
    await waitFor(() => received.includes('\r\n\r\n'), 5_000, 'upgrade');
    const upgraded = received.indexOf('\r\n\r\n') + 4;
    socket.write(Buffer.from([0x81, 0x02, 0x7b, 0x7d]));
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const frames = received.subarray(upgraded);
    const close = frames.indexOf(0x88);
    expect(close).toBeGreaterThanOrEqual(0);
    expect(frames.readUInt16BE(close + 2)).toBe(1002);

    const healthy = await connect(gw.url, 'kinds=trade');
    expect(await ask(healthy, { op: 'subscribe', id: 'ok', kinds: ['candle.close'] })).toMatchObject({ kind: 'stream.ack' });
    healthy.ws.close();
  });
});

/**
 * A flood from another process (so that the gateway, not the sender, is what may fall behind):
 * `conns` connections each send `message` every 55 ms (18 a second, under the message rate) for
 * `ms`, then waits for the answers (until every message has one, five seconds at most); prints
 * {sent, answered, closed}.
 */
const FLOOD = `
import WebSocket from 'ws';
const [url, conns, ms, message] = process.argv.slice(1);
const sockets = await Promise.all(Array.from({ length: Number(conns) }, () => new Promise((resolve, reject) => {
  const ws = new WebSocket(url); ws.once('open', () => resolve(ws)); ws.once('error', reject);
})));
let sent = 0, answered = 0;
for (const ws of sockets) ws.on('message', () => answered++);
const timer = setInterval(() => { for (const ws of sockets) if (ws.readyState === 1) { ws.send(message); sent++; } }, 55);
await new Promise((r) => setTimeout(r, Number(ms)));
clearInterval(timer);
// The answers counted are those within five seconds of the last message (one was seen to take
// more than a second on a loaded CI machine, with both cores shared by other test files).
for (const end = Date.now() + 5000; answered < sent && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
console.log(JSON.stringify({ sent, answered, closed: sockets.filter((ws) => ws.readyState !== 1).length }));
for (const ws of sockets) ws.terminate();
process.exit(0);
`;

async function flood(url: string, conns: number, ms: number, message: string): Promise<{ sent: number; answered: number; closed: number }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', FLOOD, url, String(conns), String(ms), message], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.on('exit', resolve));
  return JSON.parse(out) as { sent: number; answered: number; closed: number };
}

describe('the largest messages at the allowed rate', () => {
  let stack: Stack;
  let gw: TestGateway;

  const file = fileScope();
  beforeAll(async () => {
    // The address's own bound off (WS_ADDRESS_MESSAGES_PER_S, ADR 0350; by default an address sends
    // at most 200 a second): what is judged is the cost of reading the largest messages at every
    // connection's own rate, 100 × 18 = 1 800 a second, nine times what the default lets one address send.
    stack = await startStack(file, { WS_ADDRESS_MESSAGES_PER_S: '0' }, { markets: true });
    gw = stack.gw;
  });

  it('are read as fast as one address may send them: 100 connections, 18 maximal subscribes a second each', { timeout: 60_000 }, async () => {
    // Lists at their bound (100 values each): every value is checked against the op's schema.
    const message = JSON.stringify({ op: 'subscribe', id: 'max', kinds: Array(100).fill('trade'), markets: Array(100).fill('BTC-PERP'), intervals: Array(100).fill('1m') });
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const r = await flood(wsUrl(gw.url, 'kinds=trade'), 100, 3_000, message);
    delay.disable();
    // Every message answered within five seconds of the last, nobody closed as a flooder (messages
    // read in a burst after a stall are credited the stall, ADR 0381), turns of the loop held under a second.
    expect({ answered: r.answered, closed: r.closed }).toEqual({ answered: r.sent, closed: 0 });
    // The 95th percentile, not the max nor the 99th: on a loaded CI machine the scheduler alone can
    // hold a few turns past a second (a fresh-clone run saw p99 1.21 s, max 1.25 s, with both cores
    // shared by other test files), while a costly message check (the defect this guards) holds most of them.
    expect(delay.percentile(95) / 1e6, `loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms, max ${(delay.max / 1e6).toFixed(0)} ms`).toBeLessThan(1_000);
  });
});

describe('messages sent at the allowed rate while the gateway\'s loop is held', () => {
  let stack: Stack;
  const file = fileScope();
  beforeAll(async () => {
    // The default bounds: each connection's (20 a second, bursts of 40) and its address's (200, 400).
    stack = await startStack(file);
  });

  it('are read at once when it runs again, and nobody is closed as a flooder (ADR 0381)', { timeout: 60_000 }, async () => {
    const message = JSON.stringify({ op: 'subscribe', id: 'held', kinds: ['trade'] });
    // 10 connections at 18 a second: 180 a second from one address, within both bounds.
    const flooding = flood(wsUrl(stack.gw.url, 'kinds=trade'), 10, 5_000, message);
    await new Promise((r) => setTimeout(r, 1_000));
    // The gateway runs in this process: its loop is held 3 s, as by a long collection or a
    // costly turn. Each connection's 54 messages of those 3 s (over its burst of 40) and the
    // address's 540 (over its 400) wait in the kernel and are read in one turn.
    for (const end = Date.now() + 3_000; Date.now() < end; );
    const r = await flooding;
    expect({ answered: r.answered, closed: r.closed }).toEqual({ answered: r.sent, closed: 0 });
  });
});
