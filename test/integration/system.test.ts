import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../support/gateway.js';

describe('system routes without a database or engine', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ DATABASE_URL: undefined, ENGINE_TIMEOUT_MS: '500' });
  });
  afterAll(async () => gw.close());

  it('healthz answers ok', async () => {
    const res = await gw.app.inject('/healthz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('returns a request id on every answer: a plain caller-given one is kept, anything else replaced', async () => {
    const made = await gw.app.inject('/healthz');
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await gw.app.inject({ url: '/v1/nothing', headers: { 'x-request-id': 'edge-42.a:b_c' } });
    expect(kept.statusCode).toBe(404);
    expect(kept.headers['x-request-id']).toBe('edge-42.a:b_c');
    const hostile = await gw.app.inject({ url: '/healthz', headers: { 'x-request-id': 'a b\u0001<script>' } });
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const long = await gw.app.inject({ url: '/healthz', headers: { 'x-request-id': 'x'.repeat(129) } });
    expect(long.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('time answers the server clock, public, cross-origin, never cached; unknown query parameters are a 400', async () => {
    const before = Date.now();
    const res = await gw.app.inject({ url: '/v1/time', headers: { origin: 'https://app.example' } });
    const after = Date.now();
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['iso', 'serverTime']);
    expect(body.serverTime).toBeGreaterThanOrEqual(before);
    expect(body.serverTime).toBeLessThanOrEqual(after);
    expect(body.iso).toBe(new Date(body.serverTime).toISOString());
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('no-store');
    const bad = await gw.app.inject('/v1/time?tz=utc');
    expect([bad.statusCode, bad.json().code]).toEqual([400, 'bad_request']);
  });

  it('readyz is degraded and says why', async () => {
    const res = await gw.app.inject('/readyz');
    expect(res.statusCode).toBe(503);
    const body = res.json();
    expect(body.status).toBe('degraded');
    expect(body.reasons).toContain('DATABASE_URL is not set');
    expect(body.reasons).toContain('engine unreachable');
    expect(body.database).toMatchObject({ configured: false, reachable: false });
    expect(body.engineMaxSeq).toBeNull();
  });

  it('metrics are Prometheus text with bff_engine_max_seq and request counts by route', async () => {
    await gw.app.inject('/healthz');
    const res = await gw.app.inject('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toContain('# TYPE bff_engine_max_seq gauge');
    expect(res.body).toMatch(/bff_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
  });

  it('serves the OpenAPI description and the interactive UI', async () => {
    const json = await gw.app.inject('/docs/json');
    expect(json.statusCode).toBe(200);
    const doc = json.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.paths['/readyz'].get.responses['503']).toBeDefined();
    const ui = await gw.app.inject('/docs/');
    expect(ui.statusCode).toBe(200);
    expect(ui.body).toContain('<html');
  });

  it('unknown routes answer the error shape with CORS headers', async () => {
    const res = await gw.app.inject({ url: '/v1/nope', headers: { origin: 'http://localhost:3000' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'no route GET /v1/nope', code: 'not_found' });
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it('router-level rejections use the error shape too', async () => {
    const long = await gw.app.inject({ url: `/v1/users/${'a'.repeat(600)}/balance`, headers: { origin: 'http://x.test' } });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ error: 'a path parameter is too long', code: 'bad_request' });
    expect(long.headers['access-control-allow-origin']).toBe('*');
    const bad = await gw.app.inject({ url: '/v1/batches/%E0%A4%A' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'malformed request URL', code: 'bad_request' });
  });

  it('a 503 from /readyz also carries the error fields', async () => {
    const body = (await gw.app.inject('/readyz')).json();
    expect(body.code).toBe('not_ready');
    expect(body.error).toMatch(/^not ready: DATABASE_URL is not set/);
  });

  it('refuses unknown query parameters on /v1 routes instead of ignoring them', async () => {
    const res = await gw.app.inject('/v1/vaults?limit=abc');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'query parameter "limit" is not allowed', code: 'bad_request' });
    const typo = await gw.app.inject('/v1/fills?limt=5');
    expect(typo.statusCode).toBe(400);
    expect(typo.json()).toEqual({ error: 'query parameter "limt" is not allowed', code: 'bad_request' });
  });

  it('a plain OPTIONS that is not a preflight is answered 204, not a text/plain 400', async () => {
    const res = await gw.app.inject({ method: 'OPTIONS', url: '/v1/fills' });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
  });
});
