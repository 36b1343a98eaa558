// The dashboard and the alert rules name only metrics the gateway exposes. A real gateway (reference
// engine, a test database, the live stream on, Prometheus default metrics as in production) gets
// traffic of every kind the board shows (reads, signed orders, order book reads, a stream client)
// so its histograms and labelled counters have series; then every metric name parsed from the
// PromQL of deploy/observability/ must be among the names its /metrics declares. Also: every alert
// has a promtool unit test.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/index.js';
import { fileScope, testEngine } from '../../support/stacks.js';
import { http, makeParty, SigningClient } from '../../sandbox/engine/helpers.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { waitFor } from '../../support/scripted-sse.js';
import { connect, type TestClient } from '../../integration/stream/helpers.js';
import { Metrics } from '../../../src/metrics.js';
import type { LiveRuntime } from '../../../src/live.js';
import { metricNames } from '../../support/promql.js';
import { Registry } from 'prom-client';
import pino from 'pino';
import { RedisHandle } from '../../../src/fleet/redis.js';
import { RedisReplayGuard } from '../../../src/fleet/redis-replay-guard.js';
import { EngineRelay } from '../../../src/relay/relay.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const OBS = join(ROOT, 'deploy', 'observability');
/** Series Prometheus makes itself, not the gateway. */
const SYNTHETIC = new Set(['up', 'ALERTS']);

interface RuleFile {
  groups: Array<{ rules: Array<{ alert?: string; expr: string }> }>;
}
const rules = parse(readFileSync(join(OBS, 'prometheus', 'alerts.yml'), 'utf8')) as RuleFile;
const dashboard = JSON.parse(readFileSync(join(OBS, 'grafana', 'trading-gateway.json'), 'utf8')) as {
  panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  templating: { list: Array<{ definition?: string }> };
  annotations: { list: Array<{ expr?: string }> };
};

function dashboardExprs(): Array<{ where: string; expr: string }> {
  return [
    ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr }))),
    ...dashboard.templating.list.filter((v) => v.definition).map((v) => ({ where: 'variable', expr: v.definition!.replace(/^label_values\((.*),\s*\w+\)$/, '$1') })),
    ...dashboard.annotations.list.filter((a) => a.expr).map((a) => ({ where: 'annotation', expr: a.expr! })),
  ];
}
function ruleExprs(): Array<{ where: string; expr: string }> {
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `rule ${r.alert}`, expr: r.expr })));
}

let engine: RunningEngine;
let db: TestDatabase;
let gw: TestGateway;
let exposed: Set<string>;
let streamClient: TestClient | undefined;

const stacks = fileScope();
beforeAll(async () => {
  engine = await testEngine(stacks);
  db = await createTestDatabase();
  gw = await startGateway(
    { DATABASE_URL: db.url, ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, FAUCET_ENABLED: 'true', RATE_LIMIT_MAX: '100000', WS_ORDERBOOK_POLL_MS: '100' },
    { listen: true, overrides: { metrics: new Metrics() } },
  );
  await (gw.deps.live as LiveRuntime).start();
  await waitFor(() => (gw.deps.live as LiveRuntime).status().connected, 10_000, 'engine stream');
  // Traffic of every kind the board shows.
  const alice = new SigningClient(gw.url, makeParty('alice'));
  expect((await alice.authorize()).body).toMatchObject({ ok: true });
  expect((await alice.signed('POST', `/v1/users/${alice.id}/faucet`)).status).toBe(200);
  expect((await alice.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'limit', size: '0.01', price: '60000' })).status).toBe(200);
  expect((await http(gw.url, 'GET', '/v1/orderbook?market=BTC-PERP&depth=5')).status).toBe(200);
  expect((await http(gw.url, 'GET', '/v1/fills?limit=5')).status).toBe(200);
  expect((await http(gw.url, 'GET', '/v1/fills?limit=nope')).status).toBe(400);
  streamClient = await connect(gw.url, 'kinds=trade');
  const text = (await http(gw.url, 'GET', '/metrics')).text;
  exposed = new Set<string>();
  for (const line of text.split('\n')) {
    const declared = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (!declared) continue;
    const [, name, type] = declared;
    exposed.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exposed.add(name! + suffix);
  }
  // What only a fleet exposes: a replica's Redis metrics (REDIS_URL) and a relay's (src/relay), as
  // the real classes declare them (both connect lazily: nothing is reached here).
  const fleetRegistry = new Registry();
  const redis = new RedisHandle('redis://127.0.0.1:1', 'x:', fleetRegistry, pino({ level: 'silent' }));
  new RedisReplayGuard(redis, 30_000, fleetRegistry, pino({ level: 'silent' }));
  new EngineRelay({
    url: 'nats://127.0.0.1:1',
    stream: 'X',
    subject: 'x',
    maxAgeS: 60,
    maxBytes: 1_048_576,
    engineStreamUrl: 'http://127.0.0.1:1/',
    token: 't',
    idleMs: 1_000,
    emptyStreamStartAfter: async () => null,
    fillFrom: null,
    logger: pino({ level: 'silent' }),
    registry: fleetRegistry,
  });
  for (const m of await fleetRegistry.getMetricsAsJSON()) exposed.add(m.name);
  await redis.close();
  // The histograms the board reads have series (traffic reached them), not only declarations.
  for (const histogram of ['bff_http_request_duration_seconds_bucket', 'bff_engine_proxy_duration_seconds_bucket']) expect(text).toMatch(new RegExp(`^${histogram}\\{`, 'm'));
}, 60_000);
afterAll(async () => {
  streamClient?.ws.close();
  await gw?.close();
  await db?.drop();
});

describe('deploy/observability names only metrics the gateway exposes', () => {
  it('the PromQL parser finds metric names and nothing else', () => {
    expect(metricNames('histogram_quantile(0.99, sum by (le, route) (rate(bff_x_bucket{route!="/v1/stream", job=~"a|b"}[5m]))) > 1 and on (route) up == 0')).toEqual(['bff_x_bucket', 'up']);
    expect(metricNames('(sum(up{job="r"}) or vector(0)) < 1')).toEqual(['up']);
    expect(metricNames('bff_a > 0 and bff_b >= bff_a')).toEqual(['bff_a', 'bff_b']);
  });

  it('every alert rule', () => {
    const missing = ruleExprs().flatMap(({ where, expr }) => metricNames(expr).filter((n) => !exposed.has(n) && !SYNTHETIC.has(n)).map((n) => `${where}: ${n}`));
    expect(missing).toEqual([]);
    expect(new Set(ruleExprs().flatMap(({ expr }) => metricNames(expr))).size).toBeGreaterThan(8);
  });

  it('every dashboard panel, variable and annotation', () => {
    const missing = dashboardExprs().flatMap(({ where, expr }) => metricNames(expr).filter((n) => !exposed.has(n) && !SYNTHETIC.has(n)).map((n) => `${where}: ${n}`));
    expect(missing).toEqual([]);
    expect(dashboardExprs().length).toBeGreaterThan(20);
  });

  it('a name the gateway does not expose would be caught', () => {
    expect(exposed.has('bff_http_requests_total')).toBe(true);
    expect(metricNames('rate(bff_not_a_metric_total{result="mismatch"}[5m]) > 0').filter((n) => !exposed.has(n))).toEqual(['bff_not_a_metric_total']);
  });

  it('every alert has a promtool unit test case', () => {
    const tests = parse(readFileSync(join(OBS, 'prometheus', 'alerts.test.yml'), 'utf8')) as { tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }> };
    const firing = new Set(tests.tests.flatMap((t) => t.alert_rule_test.filter((c) => c.exp_alerts.length > 0).map((c) => c.alertname)));
    const alerts = rules.groups.flatMap((g) => g.rules.map((r) => r.alert!));
    expect(alerts.filter((a) => !firing.has(a))).toEqual([]);
  });
});
