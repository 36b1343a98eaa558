// The fleet on a 3-node NATS JetStream cluster (Debian's nats-server, started here on free loopback
// ports with its own store directories), as production runs it: a stream with 3 replicas, two
// relays and replica processes given the three seeds, live WebSocket clients on every replica.
// Each fault below runs while the engine keeps producing (50 events/s); afterwards every client must
// hold exactly the engine's log from its first frame on (0 lost, 0 repeated), its longest silence
// must be within the stream's election + 10 s (issue 30; the election as the new leader announced
// it), and no replica may stay behind. Each fault prints its timeline: the election, and when each
// relay and each client resumed (test/support/stall-timeline.ts), so a slow case says where its
// time went.
//
// 1. the first seed of the replicas and the second relay, which is the stream's leader (the seed
//    list is ordered so, after the stream was made; step-downs to put the leader on a given server
//    left Debian's NATS 2.9.10 without a writable stream for minutes), killed for 60 s;
// 2. the same seed, restarted and now a follower, killed for 20 s (its consumers, and often the
//    cluster's meta leader, die with it: no stream election, so the bound is 10 s);
// 3. the stream leader killed (SIGKILL), restarted once every client caught up;
// 4. the stream leader paused (SIGSTOP) 10 s, then SIGCONT;
// 5. a replica in its own network namespace cut off from NATS (its veth link down) 15 s while its
//    clients and the engine still reach it: it must say so (/readyz, metrics, stream.lagging to its
//    clients) and catch up by itself within 10 s of the link coming back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Registry } from 'prom-client';
import { eventually } from '../../support/eventually.js';
import { closedPort, startReplica, startTestRelay, stopReplicas, uniqueName, waitFor, type Replica } from '../../support/fleet.js';
import { NatsCluster, natsServerAvailable, type NatsNode } from '../../support/nats-cluster.js';
import { IsolatedHost, netnsAvailable } from '../../support/netns.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';
import type { EngineRelay } from '../../../src/relay/relay.js';
import { ticks } from '../../integration/stream/helpers.js';
import { Advances, timeline } from '../../support/stall-timeline.js';

const available = natsServerAvailable() && netnsAvailable();
if (!available) {
  const text = 'the NATS cluster tests need /usr/sbin/nats-server and root (ip netns)';
  if (process.env.CI) throw new Error(text);
  console.warn(`\n*** SKIPPED: ${text} ***\n`);
}

/**
 * How much longer than the stream's election a client may go without a frame (issue 30's bound).
 * The election is the server's (4-9.3 s measured); what the fleet adds after it is bounded by its
 * own reactions (ADR 0165): figures in docs/fleet.md.
 */
const STALL_MARGIN_MS = 10_000;
/** How long the paused-leader case holds the leader stopped. */
const PAUSE_MS = 10_000;

interface Client {
  name: string;
  ws: WebSocket;
  seqs: number[];
  arrivals: number[];
  lagging: Array<{ lagging: boolean; at: number }>;
}

describe.skipIf(!available)('the fleet on a 3-node NATS cluster', () => {
  let cluster: NatsCluster;
  let engine: ScriptedEngine;
  const relays: EngineRelay[] = [];
  const replicas: Array<Replica & { host: string }> = [];
  let host: IsolatedHost | null = null;
  const clients: Client[] = [];
  const name = uniqueName('cluster');
  const stream = name.toUpperCase();
  let next = 1;
  let producer: NodeJS.Timeout | null = null;
  /** Each relay's stored seq, sampled every 50 ms: when the publish path moved (the timelines). */
  const relayAdvances: Advances[] = [];
  let sampler: NodeJS.Timeout | null = null;
  /** The cluster's nodes in the order of the seed list (NATS_URL) of the replicas and the second relay. */
  let seedOrder: NatsNode[] = [];
  /** The stream's leader elections, as the cluster announced them. */
  let elections: Array<{ at: number; leader: string | null }> = [];

  const head = () => next - 1;
  const env = (port: number, natsUrl: string, engineUrl: string, listen = '127.0.0.1') => ({
    ...process.env,
    PORT: String(port),
    HOST: listen,
    LOG_LEVEL: process.env.FLEET_TEST_LOG ?? 'warn',
    DATABASE_URL: '',
    ENGINE_BASE_URL: engineUrl,
    ENGINE_ADMIN_TOKEN: engine.token,
    WS_ORDERBOOK_POLL_MS: '60000',
    NATS_URL: natsUrl,
    NATS_STREAM: stream,
    NATS_SUBJECT: `${name}.events`,
    STREAM_BEHIND_MAX_S: '3',
  });

  function client(replica: { port: number; host: string }, label: string): Promise<Client> {
    const ws = new WebSocket(`ws://${replica.host}:${replica.port}/v1/stream?control=true&kinds=engine.tick_start`);
    const c: Client = { name: label, ws, seqs: [], arrivals: [], lagging: [] };
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.kind === 'engine.tick_start') {
        c.seqs.push(m.seq);
        c.arrivals.push(Date.now());
      } else if (m.kind === 'stream.lagging') c.lagging.push({ lagging: m.payload.lagging, at: Date.now() });
    });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(c));
      ws.once('error', reject);
    });
  }

  /** Every client has the engine's log up to `to`, contiguous from its first frame, no repeat. */
  async function allCaughtUp(to: number, timeoutMs: number): Promise<void> {
    await waitFor(() => clients.every((c) => (c.seqs.at(-1) ?? 0) >= to), timeoutMs, `clients at seq ${to}`);
    for (const c of clients) {
      const first = c.seqs[0]!;
      const expected = Array.from({ length: c.seqs.length }, (_, i) => first + i);
      expect({ client: c.name, seqs: c.seqs }).toEqual({ client: c.name, seqs: expected });
      expect(new Set(c.seqs).size).toBe(c.seqs.length);
    }
  }

  /** The longest silence any client had between `from` and now (ms), and whose. */
  function longestSilence(from: number): { ms: number; client: string } {
    let worst = { ms: 0, client: '' };
    for (const c of clients) {
      let prev = from;
      for (const at of c.arrivals) {
        if (at < from) continue;
        if (at - prev > worst.ms) worst = { ms: at - prev, client: c.name };
        prev = at;
      }
    }
    return worst;
  }

  /**
   * How long the stream had no leader after `from` (ms): until the new leader announced itself
   * (the advisory), else until a stream info named one. Waits for both: the next steps need the
   * stream info to answer. (A stream info also needs the cluster's meta leader: when the killed
   * server led the meta group too, it answered up to 28.5 s after a stream election of 7 s.)
   */
  async function election(from: number, lost: string | null): Promise<number> {
    await eventually(
      async () => {
        const c = await cluster.streamCluster(stream);
        return c !== null && c.leader !== lost;
      },
      {
        timeoutMs: 45_000,
        everyMs: 25,
        // What the cluster said, for a failure seen once in CI at load 8.7 (the paused leader's case): the elections announced, the last stream info.
        what: () => `a stream leader other than ${lost ?? 'none'} (elections announced since the fault: ${JSON.stringify(elections.filter((e) => e.at >= from).map((e) => ({ afterMs: e.at - from, leader: e.leader })))}; last stream info: ${cluster.lastStreamInfo})`,
      },
    );
    const infoMs = Date.now() - from;
    const announced = elections.find((e) => e.at >= from && e.leader !== lost);
    const ms = announced ? announced.at - from : infoMs;
    console.log(`election: announced ${announced ? `${ms} ms (${announced.leader})` : 'never'}, named by a stream info after ${infoMs} ms`);
    return ms;
  }

  /** Prints where the silence after `from` was spent: relays (publishing) and clients (consuming). */
  function printTimeline(label: string, from: number, electionMs: number): void {
    const parties = [...relayAdvances.map((a, i) => ({ name: `relay${i + 1}`, at: a.at })), ...clients.map((c) => ({ name: c.name, at: c.arrivals }))];
    console.log(timeline(label, from, electionMs, parties));
  }

  async function readyz(r: { port: number; host: string }): Promise<any> {
    return (await fetch(`http://${r.host}:${r.port}/readyz`)).json();
  }

  /** No replica stays behind: each reports itself current against the engine's head. */
  async function nobodyBehind(): Promise<void> {
    for (const r of replicas) {
      await waitFor(async () => {
        const body = await readyz(r);
        return body.stream.lag && body.stream.lag.behind === false && body.stream.lag.events === 0;
      }, 15_000, `replica :${r.port} current`);
    }
  }

  async function leader(): Promise<NatsNode> {
    const c = await waitFor(() => cluster.streamCluster(stream), 20_000, 'stream leader');
    return cluster.node(c!.leader);
  }

  beforeAll(async () => {
    cluster = await NatsCluster.start(3);
    elections = await cluster.watchElections(stream);
    engine = await startScriptedEngine();
    engine.push(...ticks(1, 50));
    next = 51;
    const registry = new Registry();
    relays.push(await startTestRelay({ stream, subject: `${name}.events`, engine, natsUrl: cluster.seeds, replicas: 3, registry }));
    // The stream was made with NATS_STREAM_REPLICAS copies, and the relay reports the running count.
    expect(await registry.getSingleMetricAsString('bff_relay_stream_replicas')).toMatch(/^bff_relay_stream_replicas 3$/m);
    // Everyone else gets the stream's leader as their first seed: the first case kills it (no
    // step-downs to put the leader there: on 2.9.10 they left the stream unwritable for minutes).
    await cluster.streamHealthy(stream, 2);
    seedOrder = cluster.ordered((await leader()).name);
    const seeds = seedOrder.map((n) => n.url).join(',');
    relays.push(await startTestRelay({ stream, subject: `${name}.events`, engine, natsUrl: seeds, replicas: 3 }));
    for (const _ of relays) relayAdvances.push(new Advances());
    sampler = setInterval(() => relays.forEach((r, i) => relayAdvances[i]!.sample(r.streamLastSeq)), 50);
    producer = setInterval(() => {
      engine.push(...ticks(next, next));
      next++;
    }, 20);
    for (let i = 0; i < 2; i++) {
      const port = await closedPort();
      replicas.push({ ...(await startReplica(port, env(port, seeds, engine.url))), host: '127.0.0.1' });
    }
    // The third replica lives in its own network namespace: NATS through one link, the rest through another.
    host = new IsolatedHost('c');
    const proxied: string[] = [];
    for (const n of seedOrder) proxied.push(`nats://${host.natsGateway}:${await host.proxy(host.natsGateway, n.port)}`);
    const enginePort = await host.proxy(host.restGateway, Number(new URL(engine.url).port));
    const port = 4400 + Math.floor(Math.random() * 500);
    const isolated = await startReplica(port, env(port, proxied.join(','), `http://${host.restGateway}:${enginePort}`, host.address), {
      host: host.address,
      spawn: (command, args, options) => host!.spawn(command, args, options),
    });
    replicas.push({ ...isolated, host: host.address });
    for (const r of replicas) await waitFor(async () => (await readyz(r)).stream.connected === true, 30_000, `replica :${r.port} ready`);
    await cluster.streamHealthy(stream, 2);
    for (const [i, r] of replicas.entries()) {
      clients.push(await client(r, `replica${i + 1}-a`));
      clients.push(await client(r, `replica${i + 1}-b`));
    }
    await allCaughtUp(head(), 10_000);
  }, 120_000);

  afterAll(async () => {
    if (producer) clearInterval(producer);
    if (sampler) clearInterval(sampler);
    for (const c of clients) c.ws.terminate();
    await stopReplicas(replicas).catch(() => undefined);
    await Promise.all(relays.map((r) => r.stop()));
    await engine?.close();
    await host?.cleanup();
    await cluster?.stop();
  }, 60_000);

  /**
   * Kills `node` for `downMs` while the engine goes on, then starts it again: every client catches
   * up, its silence within the stream's election (0 when `node` did not lead it) + 10 s.
   */
  async function killFor(node: NatsNode, downMs: number, what: string, down = `for ${downMs / 1000} s`): Promise<void> {
    const wasLeader = (await cluster.streamCluster(stream))?.leader === node.name;
    const label = `${what} ${node.name} (${wasLeader ? 'the stream leader' : 'a follower'}) killed ${down}`;
    const from = Date.now();
    await cluster.kill(node);
    try {
      const electionMs = wasLeader ? await election(from, node.name) : 0;
      await new Promise((r) => setTimeout(r, Math.max(0, downMs - (Date.now() - from))));
      await allCaughtUp(head(), 20_000);
      const silence = longestSilence(from);
      console.log(`${label}: election ${electionMs} ms, longest client silence ${silence.ms} ms (${silence.client})`);
      printTimeline(label, from, electionMs);
      expect(silence.ms).toBeLessThanOrEqual(electionMs + STALL_MARGIN_MS);
    } finally {
      await cluster.startNode(node); // the next fault starts from a whole cluster, whatever happened here
      await cluster.streamHealthy(stream, 2);
    }
    await nobodyBehind();
  }

  it('the first seed, the stream leader, killed for 60 s: an election, every consumer moves, no loss, no repeat', async () => {
    await killFor(seedOrder[0]!, 60_000, 'first seed');
  }, 120_000);

  it('the first seed, now a follower, killed for 20 s: every consumer on it moves to another server', async () => {
    // Restarted by the case before, it follows (should it lead again, the case says so and bounds by its election).
    await killFor(seedOrder[0]!, 20_000, 'first seed');
  }, 90_000);

  it('the stream leader killed: an election, no loss, no repeat, no replica left behind', async () => {
    await killFor(await leader(), 0, 'server', 'until every client caught up');
  }, 90_000);

  it('the stream leader paused (SIGSTOP) 10 s then resumed', async () => {
    const victim = await leader();
    const from = Date.now();
    cluster.pause(victim);
    let electionMs: number;
    try {
      electionMs = await election(from, victim.name);
      await new Promise((r) => setTimeout(r, Math.max(0, PAUSE_MS - (Date.now() - from))));
    } finally {
      cluster.resume(victim);
    }
    await allCaughtUp(head(), 20_000);
    const silence = longestSilence(from);
    console.log(`leader ${victim.name} paused: election ${electionMs} ms, longest client silence ${silence.ms} ms (${silence.client})`);
    printTimeline(`leader ${victim.name} paused`, from, electionMs);
    // A paused server keeps its clients' TCP connections open (no reset, only missed pings): a
    // replica or relay on it leaves it when it stops answering (ADR 0165), within the same bound.
    expect(silence.ms).toBeLessThanOrEqual(electionMs + STALL_MARGIN_MS);
    await cluster.streamHealthy(stream, 2);
    await nobodyBehind();
  }, 90_000);

  it('a replica cut off from NATS 15 s says so, tells its clients, and catches up within 10 s of the heal', async () => {
    const isolated = replicas[2]!;
    const mine = clients.filter((c) => c.name.startsWith('replica3'));
    const from = Date.now();
    host!.natsLinkUp(false);
    let healedAt: number;
    try {
      // Said while it lasts: /readyz degraded with the reason, the lag metric growing, clients told.
      const degraded = await waitFor(async () => {
        const body = await readyz(isolated);
        return body.status === 'degraded' && body.reasons.some((r: string) => r.startsWith('stream behind the engine')) ? body : null;
      }, 10_000, 'the isolated replica degraded');
      expect(degraded.stream.lag.behind).toBe(true);
      // Behind and not moving: the replica probe (what the balancer asks) takes it out meanwhile.
      await waitFor(async () => {
        const res = await fetch(`http://${isolated.host}:${isolated.port}/readyz/replica`);
        const body = (await res.json()) as { reasons: string[] };
        return res.status === 503 && body.reasons.some((r) => r.startsWith('stalled: '));
      }, 10_000, 'the replica probe says stalled');
      const metric = async () => Number(/^bff_stream_behind_seconds (\S+)$/m.exec(await (await fetch(`http://${isolated.host}:${isolated.port}/metrics`)).text())![1]);
      const first = await metric();
      await new Promise((r) => setTimeout(r, 2_000));
      expect(await metric()).toBeGreaterThan(first + 1);
      await waitFor(() => mine.every((c) => c.lagging.some((l) => l.lagging && l.at >= from)), 5_000, 'stream.lagging sent');
      await new Promise((r) => setTimeout(r, Math.max(0, 15_000 - (Date.now() - from))));
    } finally {
      host!.natsLinkUp(true);
      healedAt = Date.now();
    }
    const headAtHeal = head(); // caught up: its clients have what the engine had when the link came back
    await allCaughtUp(head(), 20_000);
    const caughtUpMs = Math.max(...mine.map((c) => c.arrivals.find((_, i) => c.seqs[i]! >= headAtHeal) ?? Infinity)) - healedAt;
    const silence = longestSilence(from);
    console.log(`replica cut off 15 s: caught up ${caughtUpMs} ms after the heal, longest client silence ${silence.ms} ms (${silence.client})`);
    printTimeline('replica3 cut off 15 s', from, 0);
    expect(caughtUpMs).toBeLessThanOrEqual(10_000);
    expect(silence.ms).toBeLessThanOrEqual(healedAt - from + 10_000);
    await waitFor(() => mine.every((c) => c.lagging.at(-1)?.lagging === false), 10_000, 'stream.lagging false after the catch-up');
    await nobodyBehind();
  }, 90_000);
});
