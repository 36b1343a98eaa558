// The gateway recomputes the engine's commitments from its live stream (real SSE over loopback):
// counters, the error log naming the party and seqs, /readyz naming the incident while the gateway
// stays as ready as it was, and the start-up seed from the mirror for a gateway started mid-batch.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, waitFor } from '../../support/scripted-sse.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { engineHistory } from '../../support/engine-history.js';
import { insertEvents, startStack, type Stack } from '../stream/helpers.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';

let history: EngineEvent[];
beforeAll(async () => {
  history = await engineHistory();
}, 30_000);

const count = (kind: string) => history.filter((e) => e.kind === kind).length;

async function metric(stack: Stack, kind: string, result: string): Promise<number> {
  const text = await (await fetch(`${stack.gw.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`bff_commitments_total{kind="${kind}",result="${result}"}`));
  return line ? Number(line.split(' ').pop()) : Number.NaN;
}

function capturingLogger(): { logger: pino.Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

describe('live commitment check', () => {
  let stack: Stack | null = null;
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await stack?.close();
    await db?.drop();
  });

  it('every claim of a history streamed from seq 1 matches; a changed claim is an incident on /metrics, the log and /readyz', async () => {
    const engine = await startScriptedEngine();
    const tampered = structuredClone(history);
    const victim = tampered.filter((e) => e.kind === 'engine.user_batch_committed')[3]!;
    victim.payload.root = 'f'.repeat(64);
    const { logger, lines } = capturingLogger();
    const { startGateway } = await import('../../support/gateway.js');
    const gw = await startGateway(
      { ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, AUTH_DISABLED: 'true', WS_ORDERBOOK_POLL_MS: '60000', DATABASE_URL: db.url },
      { listen: true, overrides: { logger } },
    );
    stack = { engine, gw, live: gw.deps.live!, close: async () => { await gw.close(); await engine.close(); } };
    // The mirror holds seq 1 only: the stream starts after it, the seed covers it (history from its start).
    await insertEvents(db, tampered.slice(0, 1));
    engine.push(...tampered);
    await stack.live.start();
    await waitFor(() => {
      const st = stack!.live.commitmentStatus()!;
      return st.match + st.mismatch + st.skipped === count('engine.user_batch_committed') + count('outbound.batch_committed');
    }, 10_000, 'every claim checked');

    expect(await metric(stack, 'user_batch', 'mismatch')).toBe(1);
    expect(await metric(stack, 'user_batch', 'match')).toBe(count('engine.user_batch_committed') - 1);
    expect(await metric(stack, 'manifest', 'match')).toBe(count('outbound.batch_committed'));
    expect(await metric(stack, 'user_batch', 'skipped')).toBe(0);

    const error = lines.find((l) => l.incident === 'commitment_mismatch');
    expect(error).toMatchObject({ level: 50, kind: 'user_batch', party: victim.party, seq: victim.seq, userSeq: victim.payload.userSeq, reasons: ['root'] });
    expect(error!.firstSeq).toBeLessThan(victim.seq);
    expect(error!.msg).toContain(victim.party);

    const ready = (await (await fetch(`${stack.gw.url}/readyz`)).json()) as any;
    expect(ready.commitments).toMatchObject({ mismatch: 1, skipped: 0, incidents: [{ kind: 'user_batch', party: victim.party, seq: victim.seq, claimedRoot: 'f'.repeat(64) }] });
    // Named, not a reason to be unready.
    expect(ready.reasons.some((r: string) => /commit/i.test(r))).toBe(false);
  }, 30_000);
});

describe('a gateway started mid-batch', () => {
  let db: TestDatabase;
  let stack: Stack | null = null;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await stack?.close();
    await db?.drop();
  });

  it('seeded from the mirror, it checks the first commit after its start in full (nothing skipped)', async () => {
    // The mirror holds the history up to a few events into the third commit period.
    const manifests = history.flatMap((e, i) => (e.kind === 'outbound.batch_committed' ? [i] : []));
    const cut = manifests[1]! + 4;
    await insertEvents(db, history.slice(0, cut));
    const engine = await startScriptedEngine();
    engine.push(...history.slice(0, cut));
    stack = await startStack({ DATABASE_URL: db.url }, { engine });
    engine.push(...history.slice(cut));
    const claims = history.slice(cut).filter((e) => e.kind === 'engine.user_batch_committed' || e.kind === 'outbound.batch_committed').length;
    await waitFor(() => {
      const s = stack!.live.commitmentStatus()!;
      return s.match + s.mismatch + s.skipped === claims;
    }, 10_000, 'claims after the cut checked');
    expect(stack!.live.commitmentStatus()!).toMatchObject({ match: claims, mismatch: 0, skipped: 0 });
  }, 30_000);
});
