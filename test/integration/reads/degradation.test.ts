// Silent and loud degradation of the reads: no DATABASE_URL, an indexer schema behind 0014/0015,
// a database that is unreachable, silent, answers garbage (HTTP, random bytes), or goes away and comes back.
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../support/db.js';
import { startGateway } from '../../support/gateway.js';
import { startEmbeddedPostgres } from '../../../sandbox/pglite-server.js';
import { migrate } from '../../../schema/migrate.js';
import { A } from './fixtures.js';
import { eventually } from '../../support/eventually.js';

const LISTS = [
  '/v1/vaults', '/v1/deposits', '/v1/withdrawals', '/v1/batches', '/v1/user-batches', '/v1/orders', '/v1/fills',
  '/v1/verifications/user-batches', '/v1/verifications/manifests', '/v1/events',
  `/v1/users/${A}/deposits`, `/v1/users/${A}/withdrawals`, `/v1/users/${A}/user-batches`, `/v1/users/${A}/orders`,
  `/v1/users/${A}/fills`, `/v1/users/${A}/positions`, `/v1/users/${A}/triggers`,
];

describe('without DATABASE_URL', () => {
  it('lists are empty, single objects answer as for an empty database', async () => {
    const gw = await startGateway({ DATABASE_URL: undefined, AUTH_DISABLED: 'true', ENGINE_ADMIN_TOKEN: 'x' });
    try {
      for (const url of LISTS) {
        const res = await gw.app.inject(url);
        expect([url, res.statusCode, res.json()]).toEqual([url, 200, { items: [], nextCursor: null }]);
      }
      const one = async (url: string) => {
        const res = await gw.app.inject(url);
        return [res.statusCode, res.json()];
      };
      expect(await one('/v1/vault')).toEqual([404, { error: 'no vault', code: 'not_found' }]);
      expect(await one('/v1/vaults/op')).toEqual([404, { error: 'no vault for operator op', code: 'not_found' }]);
      expect(await one('/v1/batches/1')).toEqual([404, { error: 'no batch 1', code: 'not_found' }]);
      expect(await one(`/v1/users/${A}/balance`)).toEqual([200, { party: A, balance: '0.0000000000', asOfSeq: null }]);
      expect(await one(`/v1/users/${A}/withdrawal-counter`)).toEqual([200, { party: A, nonce: 0 }]);
      // Validation still applies without a database.
      expect((await one('/v1/fills?limit=0'))[0]).toBe(400);
    } finally {
      await gw.close();
    }
  });
});

describe('indexer schema at 0013 (gateway deployed before the indexer migrations)', () => {
  it('reads naming v2 columns answer 503 schema_behind naming the fix; other reads keep working; /readyz says why', async () => {
    const db = await createTestDatabase({ upTo: '0013_events' });
    const gw = await startGateway({ DATABASE_URL: db.url, AUTH_DISABLED: 'true' });
    try {
      await db.sql`INSERT INTO deposits (seq, deposit_id, party, amount, source, tx_id, created_at) VALUES (1, 'd-1', ${A}, 5, 'chain', NULL, now())`;
      const behind = {
        error: 'the indexer database is missing migration(s) 0014_tpsl_v2, 0015_fired_limit; migrate the indexer (0014_tpsl_v2, 0015_fired_limit), then redeploy the gateway',
        code: 'schema_behind',
        missingMigrations: ['0014_tpsl_v2', '0015_fired_limit'],
      };
      for (const url of ['/v1/orders', `/v1/users/${A}/orders`, `/v1/users/${A}/triggers`, '/v1/orders?status=open']) {
        const res = await gw.app.inject(url);
        expect([url, res.statusCode, res.json()]).toEqual([url, 503, behind]);
      }
      const deposits = await gw.app.inject('/v1/deposits');
      expect([deposits.statusCode, deposits.json().items.length]).toEqual([200, 1]);
      for (const url of ['/v1/fills', `/v1/users/${A}/positions`, `/v1/users/${A}/balance`, '/v1/events', '/v1/verifications/manifests']) {
        expect([url, (await gw.app.inject(url)).statusCode]).toEqual([url, 200]);
      }
      const ready = await gw.app.inject('/readyz');
      expect(ready.statusCode).toBe(503);
      expect(ready.json().schema).toMatchObject({ current: false, missingMigrations: ['0014_tpsl_v2', '0015_fired_limit'] });
      expect(ready.json().reasons).toContain('indexer schema behind 0015_fired_limit (missing 0014_tpsl_v2, 0015_fired_limit)');
    } finally {
      await gw.close();
      await db.drop();
    }
  });
});

// Every deadline test runs with auth off and on. With auth on, a party path with an unknown session
// makes the guard look the session up in the database before any read runs: that lookup must be
// bounded by the same deadline (it once waited forever on a peer that is not PostgreSQL).
const AUTH_MODES = [
  ['auth off', 'true'],
  ['auth on', 'false'],
] as const;

/** Signing headers of a session no one knows: well-formed, in the time window, so the guard looks it up. */
function unknownSession(): Record<string, string> {
  return { 'x-user': A, 'x-session-id': `sess-unknown-${randomBytes(4).toString('hex')}`, 'x-session-sig': `${Date.now()}.${randomBytes(64).toString('hex')}` };
}

const UNAVAILABLE = { error: 'the indexer database is unavailable; retry shortly', code: 'database_unavailable' };

/** Requests every url at once (so a test waits one deadline, not one per url); returns [url, status, body, ms]. */
async function timedAll(gw: Awaited<ReturnType<typeof startGateway>>, urls: string[], authOn: boolean) {
  return Promise.all(
    urls.map(async (url) => {
      const started = performance.now();
      const res = await gw.app.inject({ url, headers: authOn && url.startsWith('/v1/users/') ? unknownSession() : {} });
      return { url, status: res.statusCode, body: res.json(), ms: performance.now() - started };
    }),
  );
}

describe('database unreachable', () => {
  for (const [mode, authDisabled] of AUTH_MODES) {
    const authOn = authDisabled === 'false';
    describe(mode, () => {
      it('a closed port: 503 database_unavailable at once, no driver text', async () => {
        const gw = await startGateway({ DATABASE_URL: 'postgres://postgres@127.0.0.1:9/postgres', DB_CONNECT_TIMEOUT_S: '1', AUTH_DISABLED: authDisabled });
        try {
          const results = await timedAll(gw, ['/v1/fills', `/v1/users/${A}/balance`, `/v1/users/${A}/fills`, '/v1/vault', '/v1/orders'], authOn);
          for (const r of results) {
            expect(r.ms, r.url).toBeLessThan(1_500);
            expect([r.url, r.status, r.body]).toEqual([r.url, 503, UNAVAILABLE]);
          }
        } finally {
          await gw.close();
        }
      });

      it('a server that accepts and never answers: 503 within the connect timeout', async () => {
        const sockets = new Set<Socket>();
        const silent: Server = createServer((s) => sockets.add(s));
        await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
        const port = (silent.address() as { port: number }).port;
        const gw = await startGateway({ DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`, DB_CONNECT_TIMEOUT_S: '1', AUTH_DISABLED: authDisabled });
        try {
          for (const r of await timedAll(gw, ['/v1/deposits', `/v1/users/${A}/fills`], authOn)) {
            expect([r.url, r.status, r.body.code]).toEqual([r.url, 503, 'database_unavailable']);
            expect(r.ms, r.url).toBeGreaterThanOrEqual(900);
            expect(r.ms, r.url).toBeLessThan(2_500);
          }
        } finally {
          await gw.close();
          for (const s of sockets) s.destroy();
          silent.close();
        }
      });

      // A peer that accepts the connection and answers something that is not PostgreSQL: the driver waits
      // for the rest of a "message" forever (seen: 60 s). The overall deadline (connect 1 s + three
      // statements of 0.3 s + 1 s margin) answers 503 and /readyz degraded, both well within 4 s.
      const garbagePeers: Array<[string, () => Server]> = [
        ['an HTTP server', () => createHttpServer((_req, res) => res.end('hello')) as unknown as Server],
        ['a server sending random bytes', () => createServer((s) => {
          s.on('error', () => {});
          // A message header announcing ~2 GB, then a trickle of random bytes: never a complete message.
          s.write(Buffer.concat([Buffer.from('R'), Buffer.from([0x7f, 0xff, 0xff, 0xf0]), randomBytes(64)]));
          const t = setInterval(() => s.writable && s.write(randomBytes(8)), 100);
          s.on('close', () => clearInterval(t));
        })],
      ];
      for (const [name, make] of garbagePeers) {
        it(`${name} on the database port: reads 503 and /readyz degraded within the deadline`, async () => {
          const sockets = new Set<Socket>();
          const peer = make();
          peer.on('connection', (s: Socket) => sockets.add(s));
          await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
          const port = (peer.address() as { port: number }).port;
          const gw = await startGateway({
            DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`, DB_CONNECT_TIMEOUT_S: '1', DB_STATEMENT_TIMEOUT_MS: '300', AUTH_DISABLED: authDisabled,
          });
          try {
            expect(gw.deps.db.deadlineMs).toBe(2_900);
            const [results, ready] = await Promise.all([
              timedAll(gw, ['/v1/deposits', `/v1/users/${A}/orders`, `/v1/users/${A}/fills`], authOn),
              (async () => {
                const started = performance.now();
                const res = await gw.app.inject('/readyz');
                return { res, ms: performance.now() - started };
              })(),
            ]);
            for (const r of results) {
              expect([r.url, r.status, r.body]).toEqual([r.url, 503, UNAVAILABLE]);
              expect(r.ms, r.url).toBeLessThan(4_000);
            }
            expect(ready.ms).toBeLessThan(4_000);
            expect(ready.res.statusCode).toBe(503);
            expect(ready.res.json()).toMatchObject({ status: 'degraded', database: { configured: true, reachable: false } });
            expect(ready.res.json().reasons).toContain('database unreachable');
          } finally {
            await gw.close();
            for (const s of sockets) s.destroy();
            peer.close();
          }
        }, 20_000);
      }
    });
  }

  // Both auth modes share one embedded database (two PGlite cold starts are the slow part of this file).
  it('recovers by itself when the database comes back on the same port (auth off and on)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'reads-pglite-'));
    let pg = await startEmbeddedPostgres({ dataDir });
    const port = pg.port;
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    await migrate(admin);
    await admin`INSERT INTO deposits (seq, deposit_id, party, amount, source, tx_id, created_at) VALUES (7, 'd-7', ${A}, 12.5, 'faucet', NULL, now())`;
    await admin.end();
    const open = await startGateway({ DATABASE_URL: pg.url, DB_CONNECT_TIMEOUT_S: '1', AUTH_DISABLED: 'true' });
    const guarded = await startGateway({ DATABASE_URL: pg.url, DB_CONNECT_TIMEOUT_S: '1', AUTH_DISABLED: 'false' });
    const lookup = () => guarded.app.inject({ url: `/v1/users/${A}/fills`, headers: unknownSession() });
    try {
      const first = await open.app.inject('/v1/deposits');
      expect([first.statusCode, first.json().items.map((d: { seq: number; amount: string }) => [d.seq, d.amount])]).toEqual([200, [[7, '12.5000000000']]]);
      expect([(await lookup()).statusCode, (await lookup()).json().error]).toEqual([401, 'unknown session']);
      await pg.stop();
      const started = performance.now();
      const [down, guardedDown] = await Promise.all([open.app.inject('/v1/deposits'), lookup()]);
      expect(performance.now() - started).toBeLessThan(2_500);
      expect([down.statusCode, down.json()]).toEqual([503, UNAVAILABLE]);
      expect([guardedDown.statusCode, guardedDown.json()]).toEqual([503, UNAVAILABLE]);
      pg = await startEmbeddedPostgres({ dataDir, port });
      const back = await eventually(
        async () => {
          const r = await open.app.inject('/v1/deposits');
          return r.statusCode === 200 && r;
        },
        { timeoutMs: 2_000, everyMs: 100, what: 'the deposits read answered again' },
      );
      expect([back.statusCode, back.json().items.length]).toEqual([200, 1]);
      const guardedBack = await eventually(
        async () => {
          const r = await lookup();
          return r.statusCode === 401 && r;
        },
        { timeoutMs: 2_000, everyMs: 100, what: 'the guarded lookup judged again (401)' },
      );
      expect([guardedBack.statusCode, guardedBack.json().error]).toEqual([401, 'unknown session']);
    } finally {
      await open.close();
      await guarded.close();
      await pg.stop().catch(() => {});
      rmSync(dataDir, { recursive: true, force: true });
    }
    // Two cold starts of an embedded PGlite on disk: tens of seconds on a loaded 2-core machine.
  }, 90_000);
});
