// The live open interest after the engine's history is replaced (src/stream/open-interest-feed.ts,
// ADR 0181), over real SSE from the scripted engine, a real PostgreSQL mirror and a real WebSocket
// client: a history replaced from its start is followed from nothing; one replaced past its start is
// silent while the mirror still holds the old history, and sent again, right, once the mirror holds
// the new one up to an event the gateway delivered. Before this, both stayed silent until a restart.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startScriptedEngine, waitFor } from '../../support/scripted-sse.js';
import { A, B, fill, leg, simpleMatch, tick } from '../../unit/projections/fixtures.js';
import { connect, insertEvents, lockTable, sleep, startStack, ticks, ts, waitingReads, type Msg, type Stack, type TestClient } from './helpers.js';
import { eventually } from '../../support/eventually.js';

const OI = 'open_interest.update';
const QUERY = `kinds=${OI}&control=true`;

/** The open interest frames a client got after its stream.reset, as [market, seq, value, snapshot]. */
function afterReset(c: TestClient): Array<[string | undefined, number | undefined, string, boolean]> {
  const at = c.messages.findIndex((m) => m.kind === 'stream.reset');
  return c.messages.slice(at + 1).filter((m: Msg) => m.kind === OI).map((m) => [m.market, m.seq, m.payload.openInterest as string, m.snapshot ?? false]);
}

describe('open_interest.update after the engine history is replaced', () => {
  let db: TestDatabase;
  const stacks: Stack[] = [];
  const clients: TestClient[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.ws.close();
    for (const s of stacks.splice(0)) await s.close();
    await db.sql`DELETE FROM events`;
    await db.sql`DELETE FROM positions`;
  });
  afterAll(async () => db?.drop());

  async function stack(): Promise<Stack> {
    const engine = await startScriptedEngine();
    return stackOn(engine);
  }
  async function stackOn(engine: Awaited<ReturnType<typeof startScriptedEngine>>): Promise<Stack> {
    const s = await startStack({ DATABASE_URL: db.url }, { engine });
    stacks.push(s);
    await waitFor(() => s.live.status().connected, 15_000, 'connected');
    return s;
  }
  async function listen(s: Stack): Promise<TestClient> {
    const c = await connect(s.gw.url, QUERY);
    clients.push(c);
    await c.waitFor((m) => m.some((x) => x.kind === OI && x.snapshot), 10_000);
    return c;
  }

  it('a history replaced from its start (engine reset): the new history\'s figure is sent, from nothing', async () => {
    const s = await stack();
    const c = await listen(s);
    s.engine.push(simpleMatch(1, ts(1), '100', '2'));
    await c.waitFor((m) => m.some((x) => x.kind === OI && x.seq === 1 && !x.snapshot), 10_000);
    expect(c.frames().at(-1)?.payload.openInterest).toBe('2.0000000000');

    s.engine.reset(); // a new, empty history
    await c.waitFor((m) => m.some((x) => x.kind === 'stream.reset'), 15_000);
    s.engine.push(simpleMatch(1, ts(901), '100', '3'));
    await c.waitFor(() => afterReset(c).length > 0, 10_000);
    expect(afterReset(c)).toEqual([['BTC-PERP', 1, '3.0000000000', false]]);
    // A connection opened now gets it on subscribe too.
    const fresh = await listen(s);
    expect(fresh.frames().filter((f) => f.kind === OI).map((f) => [f.market, f.payload.openInterest])).toEqual([['BTC-PERP', '3.0000000000']]);
    expect([...c.schemaErrors, ...fresh.schemaErrors]).toEqual([]);
  }, 60_000);

  it('a history replaced past its start: silent while the mirror holds the old history, then the new figure (mirror seed + fills since)', async () => {
    // The old history, in the engine and the mirror: A long 2.
    const old = [simpleMatch(1, ts(1), '100', '2'), ...ticks(2, 5)];
    await insertEvents(db, old);
    await position('pa1', A, '2', 1);
    await position('pb1', B, '-2', 1);
    const engine = await startScriptedEngine();
    engine.push(...old);
    const s = await stackOn(engine);
    const c = await listen(s);
    expect(c.frames().map((f) => f.payload.openInterest)).toEqual(['2.0000000000']);

    // The engine restarts with another history that is at seq 3 before the gateway is back: its
    // events 1..3 never reach the gateway.
    const fresh = [simpleMatch(1, ts(901), '100', '5'), tick(2, ts(902)), tick(3, ts(903))];
    engine.reset();
    engine.push(...fresh);
    await c.waitFor((m) => m.some((x) => x.kind === 'stream.reset'), 15_000);
    const more = [
      tick(4, ts(904)),
      fill(5, ts(905), { price: '100', size: '1', takerSide: 'buy', legs: [
        leg({ party: A, role: 'taker', side: 'buy', size: '1', positionId: 'pa1', positionSize: '6' }),
        leg({ party: B, role: 'maker', side: 'sell', size: '1', positionId: 'pb1', positionSize: '-6' }),
      ] }),
    ];
    engine.push(...more);
    await waitFor(() => s.live.status().maxSeq === 5, 10_000, 'new history delivered');
    // The mirror still holds the old history (its seq 5 is another event): nothing is sent. The
    // feed reads the mirror again every second; with the positions locked, its read waits where
    // the test sees it. Once one read has run on the old mirror and the next one waits, the first
    // one's answer was judged (the next read starts only a timer's period after it): nothing sent.
    if (db.kind === 'postgres') {
      const first = await lockTable(db, 'positions');
      await eventually(async () => (await waitingReads(db, 'FROM positions')) > 0, { timeoutMs: 10_000, what: 'a read of the mirror again' });
      const second = lockTable(db, 'positions'); // queued behind that read: held as soon as it has run
      await first.release();
      const held = await second;
      await eventually(async () => (await waitingReads(db, 'FROM positions')) > 0, { timeoutMs: 10_000, what: 'the read after it' });
      expect(afterReset(c)).toEqual([]);
      await held.release();
    } else {
      // Deliberate (pglite: one connection, no lock to see a read by): nothing sent within 2.5 s, two reads.
      await sleep(2_500);
      expect(afterReset(c)).toEqual([]);
    }

    // The indexer wiped the mirror and wrote the new history up to seq 4: A long 5 there.
    await db.sql`DELETE FROM events`;
    await db.sql`DELETE FROM positions`;
    await insertEvents(db, [...fresh, more[0]!]);
    await position('pa1', A, '5', 1);
    await position('pb1', B, '-5', 1);
    await c.waitFor(() => afterReset(c).length > 0, 10_000);
    expect(afterReset(c)).toEqual([['BTC-PERP', 5, '6.0000000000', false]]);
    expect(c.schemaErrors).toEqual([]);
  }, 60_000);

  async function position(id: string, party: string, size: string, seq: number): Promise<void> {
    await db.sql`INSERT INTO positions (position_id, party, market, size, entry_price, realized_pnl, status, opened_seq, updated_seq, opened_at, updated_at)
      VALUES (${id}, ${party}, 'BTC-PERP', ${size}, 100, 0, 'open', ${seq}, ${seq}, ${ts(seq)}, ${ts(seq)})`;
  }
});
