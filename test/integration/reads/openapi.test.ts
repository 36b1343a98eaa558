// The OpenAPI description passes Redocly lint (rules in /redocly.yaml) with no error, and every
// read route documents its parameters, its 200 body and each error it can answer.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);

/** Every read route: operationId, query parameters, error statuses it documents. */
const READS: Array<{ path: string; op: string; query: string[]; errors: number[] }> = [
  { path: '/v1/vault', op: 'getCurrentVault', query: [], errors: [404, 503] },
  { path: '/v1/vaults', op: 'listVaults', query: [], errors: [503] },
  { path: '/v1/vaults/{operator}', op: 'getVault', query: [], errors: [400, 404, 503] },
  { path: '/v1/deposits', op: 'listDeposits', query: ['user', 'before', 'limit'], errors: [400, 503] },
  { path: '/v1/withdrawals', op: 'listWithdrawals', query: ['user', 'status', 'before', 'limit'], errors: [400, 503] },
  { path: '/v1/users/{party}/deposits', op: 'listUserDeposits', query: ['before', 'limit'], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/users/{party}/withdrawals', op: 'listUserWithdrawals', query: ['status', 'before', 'limit'], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/users/{party}/withdrawal-counter', op: 'getUserWithdrawalCounter', query: [], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/batches', op: 'listBatches', query: ['before', 'limit'], errors: [400, 503] },
  { path: '/v1/batches/{batchNum}', op: 'getBatch', query: [], errors: [400, 404, 503] },
  { path: '/v1/user-batches', op: 'listUserBatches', query: ['before', 'limit'], errors: [400, 503] },
  { path: '/v1/users/{party}/user-batches', op: 'listUserBatchesOfUser', query: ['since', 'limit'], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/users/{party}/user-batches/proofs', op: 'listUserBatchProofs', query: ['since', 'limit'], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/orders', op: 'listOrders', query: ['user', 'market', 'status', 'before', 'limit'], errors: [400, 503] },
  { path: '/v1/users/{party}/orders', op: 'listUserOrders', query: ['market', 'status', 'before', 'limit'], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/fills', op: 'listFills', query: ['user', 'market', 'before', 'limit'], errors: [400, 503] },
  { path: '/v1/users/{party}/fills', op: 'listUserFills', query: ['market', 'before', 'limit'], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/users/{party}/positions', op: 'listUserPositions', query: ['status', 'market', 'before', 'limit'], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/users/{party}/triggers', op: 'listUserTriggers', query: ['market', 'status', 'before', 'limit'], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/users/{party}/balance', op: 'getUserBalance', query: [], errors: [400, 401, 403, 429, 503] },
  { path: '/v1/verifications/user-batches', op: 'verifyUserBatches', query: ['status', 'user', 'before', 'limit'], errors: [400, 503] },
  { path: '/v1/verifications/manifests', op: 'verifyManifests', query: ['status', 'before', 'limit'], errors: [400, 503] },
  { path: '/v1/events', op: 'listEvents', query: ['since', 'type', 'user', 'market', 'limit'], errors: [400, 503] },
  { path: '/v1/markets', op: 'listMarkets', query: [], errors: [503] },
  { path: '/v1/markets/{market}', op: 'getMarket', query: [], errors: [400, 404, 503] },
];

let gw: TestGateway;
let doc: any;
let dir: string;

beforeAll(async () => {
  gw = await startGateway({ DATABASE_URL: undefined });
  doc = (await gw.app.inject('/docs/json')).json();
  dir = mkdtempSync(join(tmpdir(), 'openapi-'));
});
afterAll(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('OpenAPI description', () => {
  it('passes Redocly lint with no error', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const bin = join(ROOT, 'node_modules', '.bin', 'redocly');
    // redocly exits non-zero when it finds errors; the JSON report is on stdout either way.
    const out = await run(bin, ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }).catch(
      (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }),
    );
    const report = JSON.parse(out.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }> };
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
  }, 60_000);

  it('states the licence: Apache-2.0, as the LICENSE file at the root says', () => {
    expect(doc.info.license).toEqual({ name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' });
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0, January 2004/);
  });

  it('documents every read route: operationId, parameters, 200 schema, each error status with the Error schema', () => {
    for (const r of READS) {
      const op = doc.paths[r.path]?.get;
      expect(op, r.path).toBeDefined();
      expect(op.operationId).toBe(r.op);
      expect(op.tags?.length, r.path).toBe(1);
      expect(op.summary, r.path).toBeTruthy();
      const query = (op.parameters ?? []).filter((p: { in: string }) => p.in === 'query');
      expect(query.map((p: { name: string }) => p.name).sort(), r.path).toEqual([...r.query].sort());
      for (const p of query) {
        expect(p.required, `${r.path} ${p.name}`).toBe(false);
        expect(p.schema?.type, `${r.path} ${p.name}`).toBeDefined();
      }
      for (const p of (op.parameters ?? []).filter((p: { in: string }) => p.in === 'path')) expect(p.schema?.type).toBe(p.name === 'batchNum' ? 'integer' : 'string');
      expect(op.responses['200'].content['application/json'].schema.type, r.path).toBe('object');
      const statuses = Object.keys(op.responses).filter((s) => s !== '200').map(Number).sort();
      expect(statuses, r.path).toEqual([...r.errors].sort());
      for (const s of r.errors) {
        expect(op.responses[String(s)].content['application/json'].schema, `${r.path} ${s}`).toEqual({ $ref: '#/components/schemas/Error' });
      }
      // Public reads say so; party reads carry the signed-request scheme.
      expect(op.security, r.path).toEqual(r.path.includes('{party}') ? [{ xUser: [], xSessionId: [], xSessionSig: [] }] : []);
    }
  });

  it('every party route documents what its guards answer, 429 budget_exhausted included', () => {
    // The authenticate guard looks a session up past SESSION_LOOKUPS_PER_IP only at 429 (party-scope.ts).
    const party = Object.entries<Record<string, { responses: Record<string, unknown> }>>(doc.paths).filter(([path]) => path.startsWith('/v1/users/{party}'));
    expect(party.length).toBeGreaterThan(10);
    for (const [path, ops] of party) {
      for (const [method, op] of Object.entries(ops)) {
        for (const s of ['400', '401', '403', '429', '503']) expect(op.responses[s], `${method} ${path} ${s}`).toBeDefined();
      }
    }
  });

  it('documents the candle history: required market and interval, the interval set, the ms window, the cursor', () => {
    const op = doc.paths['/v1/candles'].get;
    expect([op.operationId, op.tags, op.security]).toEqual(['listCandles', ['markets'], []]);
    const params = Object.fromEntries(op.parameters.map((p: { name: string }) => [p.name, p]));
    expect(Object.keys(params).sort()).toEqual(['from', 'interval', 'limit', 'market', 'to']);
    expect([params.market.required, params.interval.required, params.from.required, params.to.required]).toEqual([true, true, false, false]);
    expect(params.interval.schema.enum).toEqual(['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w']);
    expect(params.from.schema).toMatchObject({ type: 'integer', minimum: 0 });
    const body = op.responses['200'].content['application/json'].schema;
    expect(Object.keys(body.properties.items.items.properties).sort()).toEqual(
      ['close', 'closeTs', 'closed', 'high', 'interval', 'low', 'market', 'open', 'openTs', 'trades', 'volume'],
    );
    expect(Object.keys(op.responses).sort()).toEqual(['200', '400', '503']);
    const time = doc.paths['/v1/time'].get;
    expect([time.operationId, time.security, Object.keys(time.responses['200'].content['application/json'].schema.properties).sort()])
      .toEqual(['getTime', [], ['iso', 'serverTime']]);
  });

  it('states the page rule and the enum value sets', () => {
    const fills = doc.paths['/v1/fills'].get;
    expect(fills.responses['200'].description).toContain('never split');
    const status = (path: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'status').schema.enum;
    expect(status('/v1/orders')).toEqual(['open', 'partially_filled', 'filled', 'cancelled', 'rejected']);
    expect(status('/v1/users/{party}/triggers')).toEqual(['armed', 'cancelled', 'fired']);
    expect(status('/v1/withdrawals')).toEqual(['requested', 'approved', 'rejected']);
    expect(status('/v1/users/{party}/positions')).toEqual(['open', 'closed', 'all']);
    expect(status('/v1/verifications/manifests')).toEqual(['match', 'mismatch', 'pending']);
    const limit = fills.parameters.find((p: { name: string }) => p.name === 'limit').schema;
    expect(limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 100 });
  });
});
