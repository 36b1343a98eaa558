// Every parameter of every read route, tried with wrong types, out-of-range and hostile values:
// always 400 `bad_request` naming the parameter, never a 5xx. Property tests check the validators
// accept exactly the documented value sets.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';

const PARTY = `alice::${'ab'.repeat(32)}`;
let gw: TestGateway;

beforeAll(async () => {
  // No database: valid requests answer 200 with empty data, so any non-200 comes from validation.
  gw = await startGateway({ DATABASE_URL: undefined, AUTH_DISABLED: 'true' });
});
afterAll(async () => gw?.close());

type Kind = 'limit' | 'seq' | 'party' | 'market' | 'status' | 'kind' | 'userSeq' | 'batchNum';
interface Route {
  path: string;
  query: Record<string, Kind>;
  status?: readonly string[];
}

const ORDER = ['open', 'partially_filled', 'filled', 'cancelled', 'rejected'];
const ROUTES: Route[] = [
  { path: '/v1/vaults', query: {} },
  { path: '/v1/deposits', query: { user: 'party', before: 'seq', limit: 'limit' } },
  { path: '/v1/withdrawals', query: { user: 'party', status: 'status', before: 'seq', limit: 'limit' }, status: ['requested', 'approved', 'rejected'] },
  { path: `/v1/users/${PARTY}/deposits`, query: { before: 'seq', limit: 'limit' } },
  { path: `/v1/users/${PARTY}/withdrawals`, query: { status: 'status', before: 'seq', limit: 'limit' }, status: ['requested', 'approved', 'rejected'] },
  { path: `/v1/users/${PARTY}/withdrawal-counter`, query: {} },
  { path: '/v1/batches', query: { before: 'batchNum', limit: 'limit' } },
  { path: '/v1/user-batches', query: { before: 'batchNum', limit: 'limit' } },
  { path: `/v1/users/${PARTY}/user-batches`, query: { since: 'userSeq', limit: 'limit' } },
  { path: '/v1/orders', query: { user: 'party', market: 'market', status: 'status', before: 'seq', limit: 'limit' }, status: ORDER },
  { path: `/v1/users/${PARTY}/orders`, query: { market: 'market', status: 'status', before: 'seq', limit: 'limit' }, status: ORDER },
  { path: '/v1/fills', query: { user: 'party', market: 'market', before: 'seq', limit: 'limit' } },
  { path: `/v1/users/${PARTY}/fills`, query: { market: 'market', before: 'seq', limit: 'limit' } },
  { path: `/v1/users/${PARTY}/positions`, query: { status: 'status', market: 'market', before: 'seq', limit: 'limit' }, status: ['open', 'closed', 'all'] },
  { path: `/v1/users/${PARTY}/triggers`, query: { market: 'market', status: 'status', before: 'seq', limit: 'limit' }, status: ['armed', 'cancelled', 'fired'] },
  { path: `/v1/users/${PARTY}/balance`, query: {} },
  { path: '/v1/verifications/user-batches', query: { status: 'status', user: 'party', before: 'seq', limit: 'limit' }, status: ['match', 'mismatch', 'pending'] },
  { path: '/v1/verifications/manifests', query: { status: 'status', before: 'seq', limit: 'limit' }, status: ['match', 'mismatch', 'pending'] },
  { path: '/v1/events', query: { since: 'seq', type: 'kind', user: 'party', market: 'market', limit: 'limit' } },
];

const SQLI = "1' OR '1'='1'; DROP TABLE fills; --";
const NUMBER_BAD = ['', ' ', '\t', ' 5', '0x10', '+5', 'abc', '-1', '1.5', '1e400', '99999999999999999999', '9007199254740993', 'NaN', 'Infinity', SQLI, '١٢', 'true', '[1]'];
const BAD: Record<Kind, string[]> = {
  limit: [...NUMBER_BAD, '0', '1001', '100000'],
  seq: NUMBER_BAD,
  userSeq: NUMBER_BAD,
  batchNum: NUMBER_BAD,
  party: ['', 'alice', `alice::${'AB'.repeat(32)}`, `alice::${'ab'.repeat(31)}`, `Alice::${'ab'.repeat(32)}`, `${'a'.repeat(49)}::${'ab'.repeat(32)}`, SQLI, `ålice::${'ab'.repeat(32)}`, `alice::${'ab'.repeat(32)}\n`],
  market: ['', 'BTC PERP', 'x'.repeat(65), 'BTC-PЕRP', SQLI.replace(/ /g, ' '), '€', 'BTC\tPERP'],
  status: ['', 'OPEN', 'open ', 'unknown', SQLI, 'ópen', 'null'],
  kind: ['', 'engine.nope', 'ENGINE.ORDER_FILLED', SQLI, 'order_filled'],
};

async function expect400(url: string, param: string) {
  const res = await gw.app.inject(url);
  expect([url, res.statusCode]).toEqual([url, 400]);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['code', 'error']);
  expect(body.code).toBe('bad_request');
  expect(body.error, url).toContain(`"${param}"`);
}

describe('every query parameter of every read route', () => {
  for (const route of ROUTES) {
    it(`${route.path.replace(PARTY, ':party')}`, async () => {
      expect((await gw.app.inject(route.path)).statusCode).toBe(200);
      for (const [param, kind] of Object.entries(route.query)) {
        for (const value of BAD[kind]) await expect400(`${route.path}?${param}=${encodeURIComponent(value)}`, param);
        // Repeated parameters are an array where one value is expected.
        const good = kind === 'status' ? route.status![0]! : kind === 'party' ? PARTY : kind === 'market' ? 'BTC-PERP' : kind === 'kind' ? 'engine.order_filled' : '5';
        await expect400(`${route.path}?${param}=${encodeURIComponent(good)}&${param}=${encodeURIComponent(good)}`, param);
        const ok = await gw.app.inject(`${route.path}?${param}=${encodeURIComponent(good)}`);
        expect([param, ok.statusCode]).toEqual([param, 200]);
      }
    });
  }
});

describe('path parameters', () => {
  it(':party of every party route', async () => {
    const partyRoutes = ROUTES.filter((r) => r.path.includes(PARTY));
    for (const route of partyRoutes) {
      for (const value of BAD.party.filter((v) => v !== '')) {
        await expect400(route.path.replace(PARTY, encodeURIComponent(value)), 'party');
      }
    }
  });

  it(':batchNum and :operator', async () => {
    for (const value of NUMBER_BAD.filter((v) => v !== '')) await expect400(`/v1/batches/${encodeURIComponent(value)}`, 'batchNum');
    for (const value of ['a b', 'é', 'x'.repeat(300), '\t']) await expect400(`/v1/vaults/${encodeURIComponent(value)}`, 'operator');
    expect((await gw.app.inject('/v1/batches/9007199254740991')).statusCode).toBe(404);
    // A valid party id of the maximum length (48-character hint) reaches its route.
    const longest = `${'h'.repeat(48)}::${'ab'.repeat(32)}`;
    expect((await gw.app.inject(`/v1/users/${longest}/balance`)).json()).toEqual({ party: longest, balance: '0.0000000000', asOfSeq: null });
    // Beyond maxParamLength the router itself refuses with Fastify's own 414 body (not through the
    // app's error handler): still a 4xx carrying string `error` and `code`.
    const huge = await gw.app.inject(`/v1/users/${'a'.repeat(2000)}/balance`);
    expect(huge.statusCode).toBe(414);
    expect(huge.json()).toMatchObject({ error: expect.any(String), code: expect.any(String) });
    // Malformed percent-encoding in the path is refused by the router the same way (400).
    for (const url of ['/v1/users/%E0%A4%A/balance', '/v1/batches/%']) {
      const bad = await gw.app.inject(url);
      expect([url, bad.statusCode]).toEqual([url, 400]);
      expect(bad.json()).toMatchObject({ error: expect.any(String), code: expect.any(String) });
    }
    // …and in a query value it reaches the parameter check.
    await expect400('/v1/fills?limit=%E0%A4%A', 'limit');
    expect((await gw.app.inject(`/v1/vaults/${encodeURIComponent(SQLI.replace(/ /g, '_'))}`)).statusCode).toBe(404);
  });
});

/** What the validators must accept for an integer parameter: a string that is an integer in range. */
const integerIn = (s: string, min: number, max: number) => /^(?:0|[1-9]\d{0,15})$/.test(s) && Number(s) >= min && Number(s) <= max;

const anyText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }),
  fc.string({ unit: 'binary-ascii', maxLength: 30 }),
  fc.integer({ min: -5, max: 2_000 }).map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.double().map(String),
);

async function statusOf(url: string): Promise<number> {
  return (await gw.app.inject(url)).statusCode;
}

describe('property: validators accept exactly their value sets, never 5xx', () => {
  it('limit', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (s) => {
        const status = await statusOf(`/v1/fills?limit=${encodeURIComponent(s)}`);
        expect(status).toBe(integerIn(s, 1, 1000) ? 200 : 400);
      }),
      { numRuns: 300 },
    );
  });

  it('before and since', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (s) => {
        const expected = integerIn(s, 0, Number.MAX_SAFE_INTEGER) ? 200 : 400;
        expect(await statusOf(`/v1/deposits?before=${encodeURIComponent(s)}`)).toBe(expected);
        expect(await statusOf(`/v1/events?since=${encodeURIComponent(s)}`)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('status', async () => {
    const statuses = ['open', 'partially_filled', 'filled', 'cancelled', 'rejected'];
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyText, fc.constantFrom(...statuses)), async (s) => {
        expect(await statusOf(`/v1/orders?status=${encodeURIComponent(s)}`)).toBe(statuses.includes(s) ? 200 : 400);
      }),
      { numRuns: 300 },
    );
  });

  it('party (query and path)', async () => {
    const validParty = fc
      .tuple(fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,47}$/), fc.stringMatching(/^[0-9a-f]{64}$/))
      .map(([h, k]) => `${h}::${k}`);
    const re = /^[a-z0-9][a-z0-9_-]{0,47}::[0-9a-f]{64}$/;
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyText, validParty, validParty.map((p) => p.toUpperCase()), validParty.map((p) => `${p}0`)), async (s) => {
        const expected = re.test(s) ? 200 : 400;
        expect(await statusOf(`/v1/fills?user=${encodeURIComponent(s)}`)).toBe(expected);
        if (s !== '' && s !== '.' && s !== '..') expect(await statusOf(`/v1/users/${encodeURIComponent(s)}/balance`)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('market', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (s) => {
        expect(await statusOf(`/v1/fills?market=${encodeURIComponent(s)}`)).toBe(/^[\x21-\x7E]{1,64}$/.test(s) ? 200 : 400);
      }),
      { numRuns: 300 },
    );
  });
});
