// Every replica of a fleet runs the commitment check (docs/verification.md, "The gateway's own
// check"): two gateway replica processes sharing Redis and consuming one JetStream stream that a
// relay fills from a scripted engine replaying a real history of the reference engine, in which the
// engine claims one user batch with a wrong root. Each replica (asked directly: /metrics and
// /readyz are per replica, not for the load balancer) counts that claim as a mismatch and every
// other claim as a match, and names it on its /readyz without its readiness changing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, fleetServices, forgetFleetState, NATS_URL, REDIS_URL, uniqueName, waitFor, startReplica, startTestRelay, stopReplicas, type Replica } from '../../support/fleet.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';
import { engineHistory } from '../../support/engine-history.js';
import type { EngineRelay } from '../../../src/relay/relay.js';
import type { EngineEvent } from '../../../src/contracts/engine-event.js';

const available = await fleetServices({ redis: true, nats: true });

async function counter(base: string, kind: string, result: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`bff_commitments_total{kind="${kind}",result="${result}"}`));
  return line ? Number(line.split(' ').pop()) : Number.NaN;
}

describe.skipIf(!available)('the commitment check on every replica of a fleet', () => {
  let engine: ScriptedEngine;
  let relay: EngineRelay;
  let history: EngineEvent[];
  let victim: EngineEvent;
  const replicas: Replica[] = [];
  const name = uniqueName('commit');
  const stream = name.toUpperCase();
  const prefix = `${name}:`;

  async function startFleetReplica(port: number): Promise<Replica> {
    const env = {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'fatal', // the mismatch is logged as an error by design; the test reads /metrics and /readyz
      DATABASE_URL: '',
      ENGINE_BASE_URL: engine.url,
      ENGINE_ADMIN_TOKEN: engine.token,
      WS_ORDERBOOK_POLL_MS: '60000',
      TRUST_PROXY: '127.0.0.1',
      REDIS_URL,
      REDIS_PREFIX: prefix,
      NATS_URL,
      NATS_STREAM: stream,
      NATS_SUBJECT: `${name}.events`,
    };
    return startReplica(port, env);
  }

  beforeAll(async () => {
    history = structuredClone(await engineHistory());
    victim = history.filter((e) => e.kind === 'engine.user_batch_committed')[3]!;
    victim.payload.root = 'f'.repeat(64); // the engine's claim differs from the events it streamed
    engine = await startScriptedEngine();
    relay = await startTestRelay({ stream, subject: `${name}.events`, engine });
    const ports = [await closedPort(), await closedPort()];
    replicas.push(...(await Promise.all(ports.map((p) => startFleetReplica(p)))));
  }, 120_000);

  afterAll(async () => {
    await stopReplicas(replicas);
    await relay?.stop();
    await engine?.close();
    await forgetFleetState(stream, prefix);
  });

  it('each replica counts the wrong claim as a mismatch, every other claim as a match, and names it on /readyz', async () => {
    type Ready = { reasons: string[]; commitments: { mismatch: number; incidents: Array<Record<string, unknown>> } };
    const readiness = async (base: string) => {
      const res = await fetch(`${base}/readyz`);
      return { status: res.status, body: (await res.json()) as Ready };
    };
    const before = await Promise.all(replicas.map((r) => readiness(`http://127.0.0.1:${r.port}`)));
    engine.push(...history);
    const userClaims = history.filter((e) => e.kind === 'engine.user_batch_committed').length;
    const manifests = history.filter((e) => e.kind === 'outbound.batch_committed').length;
    for (const r of replicas) {
      const base = `http://127.0.0.1:${r.port}`;
      await waitFor(async () => (await counter(base, 'user_batch', 'match')) + (await counter(base, 'user_batch', 'mismatch')) === userClaims, 20_000, `claims checked on :${r.port}`);
      expect(await counter(base, 'user_batch', 'mismatch')).toBe(1);
      expect(await counter(base, 'user_batch', 'match')).toBe(userClaims - 1);
      expect(await counter(base, 'user_batch', 'skipped')).toBe(0);
      // The manifest over the true roots matches: one wrong claim, one incident.
      await waitFor(async () => (await counter(base, 'manifest', 'match')) === manifests, 10_000, `manifests on :${r.port}`);
      // Named, not a reason to be unready: the incident adds no reason to those before it (the
      // replicas have no database here, which is one). Under load a replica can be a few seconds
      // behind the engine right after the push ("stream behind the engine … (catching up)"), a
      // reason of its own that passes: the reasons are read once it has.
      const was = before[replicas.indexOf(r)]!;
      expect(was.body.commitments.mismatch).toBe(0);
      const added = (ready: { body: Ready }) => ready.body.reasons.filter((reason) => !was.body.reasons.includes(reason));
      const ready = (await waitFor(async () => {
        const now = await readiness(base);
        const extra = added(now);
        // Any other reason is judged at once (and fails below); only the catching up is waited out.
        return extra.length === 0 || extra.some((reason) => !/catching up/.test(reason)) ? now : null;
      }, 15_000, `the replica on :${r.port} caught up`))!;
      expect(ready.body.commitments).toMatchObject({ mismatch: 1, incidents: [{ kind: 'user_batch', party: victim.party, seq: victim.seq, claimedRoot: 'f'.repeat(64) }] });
      expect(added(ready)).toEqual([]);
      expect(ready.body.reasons.some((reason) => /commit/i.test(reason))).toBe(false);
    }
  }, 60_000);
});
