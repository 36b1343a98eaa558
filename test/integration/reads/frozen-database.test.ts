// A database host that vanishes behind a stateful middlebox (docs/reliability.md "Database
// connections"): a TCP proxy between the gateway and PostgreSQL freezes every open connection for
// good (nothing forwarded either way, nothing closed) and holds new ones for a while, then lets new
// connections through. More concurrent readers than pool connections, so every connection has a
// query in flight when it freezes. The gateway must notice the dead connections and read again
// through new ones soon after the proxy lets them through, not keep answering 503 for ever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type CuttableProxy } from '../../../sandbox/soak/proxy.js';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { waitFor } from '../../support/fleet.js';

const STATEMENT_TIMEOUT_MS = 400;
const FREEZE_MS = 3_000;

describe('a database connection frozen by the network', () => {
  let db: TestDatabase;
  let proxy: CuttableProxy;
  let gw: TestGateway;
  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    proxy = await startProxy(Number(url.port || 5432));
    url.port = String(proxy.port);
    url.hostname = '127.0.0.1';
    gw = await startGateway(
      { DATABASE_URL: url.toString(), DB_POOL_MAX: '4', DB_CONNECT_TIMEOUT_S: '1', DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) },
      { listen: true },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await proxy?.close();
    await db?.drop();
  });

  it('reads recover soon after new connections pass again', async () => {
    const read = async () => (await fetch(`${gw.url}/v1/fills?limit=1`)).status;
    expect(await read()).toBe(200);
    let running = true;
    const statuses: number[] = [];
    // 6 readers on a pool of 4: every connection has a query in flight, two are queued.
    const readers = Array.from({ length: 6 }, async () => {
      while (running) statuses.push(await read());
    });
    await waitFor(() => statuses.length >= 20, 10_000, 'reads before the freeze');
    const frozenAt = Date.now();
    expect(proxy.freeze(FREEZE_MS)).toBeGreaterThan(0);
    await waitFor(() => Date.now() - frozenAt >= FREEZE_MS, FREEZE_MS + 1_000, 'the freeze to end');
    const thawedAt = Date.now();
    const before = statuses.length;
    // Within the statement timeout + 1 s (the watchdog) + a connect + a read's deadline, with room.
    await waitFor(() => statuses.slice(before).filter((s) => s === 200).length >= 20, 15_000, 'reads to succeed again after the freeze');
    const recoveredMs = Date.now() - thawedAt;
    running = false;
    await Promise.all(readers);
    // Only documented answers, and the recovery was prompt (not after the OS's minutes of TCP timers).
    expect(new Set(statuses.filter((s) => s !== 200 && s !== 503))).toEqual(new Set());
    expect(recoveredMs).toBeLessThan(10_000);
  });
});
