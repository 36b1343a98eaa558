// Traces of a real gateway in front of the reference engine, with the SDK's in-memory exporter:
// the span tree of a place-order request (the client's traceparent continued, one span named by the
// route template, a client span for the engine call), the traceparent the engine receives while the
// signed headers and body arrive byte for byte, a database read's span named by its statement, and
// the span of the engine stream's connection. Between the gateway and the engine sits a recording
// forwarder, so what the engine received is seen as bytes.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { eventually } from '../../support/eventually.js';
import { http, makeParty, SigningClient } from '../../sandbox/engine/helpers.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startTracing, stopTracing } from '../../../src/tracing/index.js';
import type { LiveRuntime } from '../../../src/live.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Forwards every request to `target` as is and keeps what it received. */
async function recordingForwarder(target: string): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      request(target + req.url, { method: req.method as 'GET', headers, body: body.length > 0 ? body : null })
        .then(async (answer) => {
          const out: Record<string, string | string[]> = {};
          for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
          res.writeHead(answer.statusCode, out);
          for await (const chunk of answer.body) res.write(chunk);
          res.end();
        })
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

const exporter = new InMemorySpanExporter();
let engine: RunningEngine;
let forwarder: Awaited<ReturnType<typeof recordingForwarder>>;
let db: TestDatabase;
let gw: TestGateway;
let alice: SigningClient;

/** The finished spans `match` picks, once there are `count` (or what there is after 5 s). */
async function spansWhere(match: (s: ReadableSpan) => boolean, count = 1): Promise<ReadableSpan[]> {
  const found = () => exporter.getFinishedSpans().filter(match);
  return eventually(() => found().length >= count && found(), { timeoutMs: 5_000 }).catch(() => found());
}

const stacks = fileScope();
beforeAll(async () => {
  await startTracing('trading-gateway', { spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  engine = await testEngine(stacks);
  forwarder = await recordingForwarder(engine.url);
  db = await createTestDatabase();
  gw = await startGateway(
    { DATABASE_URL: db.url, ENGINE_BASE_URL: forwarder.url, ENGINE_ADMIN_TOKEN: engine.adminToken, FAUCET_ENABLED: 'true', RATE_LIMIT_MAX: '100000' },
    { listen: true },
  );
  await (gw.deps.live as LiveRuntime).start();
  alice = new SigningClient(gw.url, makeParty('alice'));
  expect((await alice.authorize()).body).toMatchObject({ ok: true });
  expect((await alice.signed('POST', `/v1/users/${alice.id}/faucet`)).status).toBe(200);
});
afterAll(async () => {
  await gw?.close();
  await stopTracing();
  await new Promise((r) => forwarder?.server.close(r));
  await db?.drop();
});

describe('traces (OpenTelemetry SDK, in-memory exporter)', () => {
  it('continues the client trace: place-order span named by route, a client span for the engine call, traceparent sent on', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    const body = JSON.stringify({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '60000' });
    const signedHeaders = alice.signHeaders('POST', '/v1/orders', body);
    const answer = await http(gw.url, 'POST', '/v1/orders', { body, headers: { ...signedHeaders, traceparent: `00-${traceId}-${clientSpan}-01` } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, status: 'open' });

    const [server] = await spansWhere((s) => s.name === 'POST /v1/orders');
    expect(server).toBeDefined();
    expect(server!.kind).toBe(SpanKind.SERVER);
    expect(server!.spanContext().traceId).toBe(traceId);
    expect(server!.parentSpanContext?.spanId).toBe(clientSpan);
    expect(server!.attributes['http.route']).toBe('/v1/orders');
    expect(server!.attributes['http.response.status_code']).toBe(200);

    const [call] = await spansWhere((s) => s.name === 'engine POST' && s.spanContext().traceId === traceId);
    expect(call).toBeDefined();
    expect(call!.kind).toBe(SpanKind.CLIENT);
    expect(call!.parentSpanContext?.spanId).toBe(server!.spanContext().spanId);
    expect(call!.attributes['url.path']).toBe('/v1/orders');
    expect(call!.attributes['http.response.status_code']).toBe(200);
    // Exactly these two spans in the trace: one per request, one per engine call.
    expect(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId).map((s) => s.name).sort()).toEqual(['POST /v1/orders', 'engine POST']);

    // The engine got the engine span as parent, and the signed request unchanged.
    const sent = forwarder.received.find((r) => r.method === 'POST' && r.url === '/v1/orders' && r.headers.traceparent?.includes(traceId));
    expect(sent).toBeDefined();
    expect(sent!.headers.traceparent).toBe(`00-${traceId}-${call!.spanContext().spanId}-01`);
    expect(sent!.body.equals(Buffer.from(body))).toBe(true);
    for (const [name, value] of Object.entries(signedHeaders)) expect(sent!.headers[name]).toBe(value);
  });

  it('starts a new trace without a traceparent, and a database read is a child span named by its statement, without values', async () => {
    const path = `/v1/users/${alice.id}/fills?limit=5`;
    const answer = await alice.signed('GET', path);
    expect(answer.status).toBe(200);
    const [server] = await spansWhere((s) => s.name === 'GET /v1/users/:party/fills');
    expect(server).toBeDefined();
    expect(server!.parentSpanContext).toBeUndefined();
    const [read] = await spansWhere((s) => s.name === 'db listFillsJson' && s.spanContext().traceId === server!.spanContext().traceId);
    expect(read).toBeDefined();
    expect(read!.parentSpanContext?.spanId).toBe(server!.spanContext().spanId);
    expect(read!.attributes).toEqual({ 'db.system.name': 'postgresql', 'db.query.summary': 'listFillsJson' });
  });

  it('makes no span for /metrics, /healthz and /readyz scrapes', async () => {
    for (const path of ['/metrics', '/healthz', '/readyz']) expect((await http(gw.url, 'GET', path)).status).toBeLessThan(600);
    // A traced request after them: once its span is out, theirs would be too.
    expect((await http(gw.url, 'GET', '/v1/time')).status).toBe(200);
    expect(await spansWhere((s) => s.name === 'GET /v1/time')).toHaveLength(1);
    expect(exporter.getFinishedSpans().filter((s) => /metrics|healthz|readyz/.test(s.name))).toEqual([]);
  });

  it('traces each engine stream (re)connection as a root span, its traceparent sent to the engine', async () => {
    const [connect] = await spansWhere((s) => s.name === 'engine stream connect');
    expect(connect).toBeDefined();
    expect(connect!.kind).toBe(SpanKind.CLIENT);
    expect(connect!.parentSpanContext).toBeUndefined();
    expect(connect!.attributes['engine.stream.source']).toBe('sse');
    expect(connect!.attributes['http.response.status_code']).toBe(200);
    const streamRequest = forwarder.received.find((r) => r.url.startsWith('/v1/admin/events/stream'));
    expect(streamRequest?.headers.traceparent).toBe(`00-${connect!.spanContext().traceId}-${connect!.spanContext().spanId}-01`);
  });
});
