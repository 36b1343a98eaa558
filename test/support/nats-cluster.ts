// A NATS JetStream cluster of the test's own (Debian's /usr/sbin/nats-server), on free loopback
// ports, each node with its own store directory: for the fault tests (a node killed, paused,
// restarted). The machine's shared NATS is never touched. Routes name every node; `no_advertise`
// keeps the servers from announcing their loopback addresses to clients, so a client uses exactly
// the seeds it was given (a replica in its own network namespace reaches the cluster through
// proxies, test/support/netns.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { closedPort, tcpReachable, waitFor } from './fleet.js';
import { watchLeaderElections } from '../../src/fleet/leader-elections.js';

export const NATS_SERVER = '/usr/sbin/nats-server';
export const natsServerAvailable = (): boolean => existsSync(NATS_SERVER);

/**
 * One throwaway nats-server with JetStream on a free loopback port and its own store directory,
 * stopped (SIGTERM) and started again on the same port and store by the test.
 */
export class SingleNats {
  private proc: ChildProcess | null = null;
  private readonly dir = mkdtempSync(join(tmpdir(), 'nats-single-'));
  private constructor(readonly port: number) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<SingleNats> {
    const n = new SingleNats(await closedPort());
    await n.start();
    return n;
  }

  async start(): Promise<void> {
    this.proc = spawn(NATS_SERVER, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.dir], { stdio: 'ignore' });
    await waitFor(() => tcpReachable(this.url), 10_000, 'nats-server');
  }

  async stop(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    await exited;
    this.proc = null;
  }

  /** Stops the server if running and removes its store. */
  async remove(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface NatsNode {
  name: string;
  port: number;
  clusterPort: number;
  url: string;
  proc: ChildProcess | null;
}

export class NatsCluster {
  readonly nodes: NatsNode[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'nats-cluster-'));
  private admin: NatsConnection | null = null;

  /** The comma-separated seed list (NATS_URL), first node first. */
  get seeds(): string {
    return this.nodes.map((n) => n.url).join(',');
  }

  /** The nodes with `first` first (the order of a seed list whose first seed is that node). */
  ordered(first: string): NatsNode[] {
    return [this.node(first), ...this.nodes.filter((n) => n.name !== first)];
  }

  static async start(size = 3): Promise<NatsCluster> {
    const c = new NatsCluster();
    for (let i = 1; i <= size; i++) {
      const port = await closedPort();
      const clusterPort = await closedPort();
      c.nodes.push({ name: `n${i}`, port, clusterPort, url: `nats://127.0.0.1:${port}`, proc: null });
    }
    await Promise.all(c.nodes.map((n) => c.startNode(n)));
    // Ready once the meta group has a leader that knows every server: a stream on all of them can be placed.
    await waitFor(async () => (await c.jsReady(size)) === true, 30_000, 'JetStream cluster ready');
    return c;
  }

  private config(n: NatsNode): string {
    const routes = this.nodes.map((o) => `nats-route://127.0.0.1:${o.clusterPort}`).join(', ');
    return [
      `server_name: ${n.name}`,
      `listen: 127.0.0.1:${n.port}`,
      `jetstream { store_dir: "${join(this.dir, n.name)}", max_memory_store: 64MB, max_file_store: 1GB }`,
      `cluster { name: gwtest, listen: 127.0.0.1:${n.clusterPort}, routes: [${routes}], no_advertise: true }`,
      '',
    ].join('\n');
  }

  async startNode(n: NatsNode): Promise<void> {
    const file = join(this.dir, `${n.name}.conf`);
    writeFileSync(file, this.config(n));
    n.proc = spawn(NATS_SERVER, ['-c', file], { stdio: 'ignore' });
    await waitFor(() => tcpReachable(n.url, 500), 15_000, `nats ${n.name}`);
  }

  /** SIGKILL (no goodbye to the cluster). */
  async kill(n: NatsNode): Promise<void> {
    const p = n.proc;
    if (!p) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
    n.proc = null;
  }

  pause(n: NatsNode): void {
    n.proc?.kill('SIGSTOP');
  }

  resume(n: NatsNode): void {
    n.proc?.kill('SIGCONT');
  }

  private async adminConnection(): Promise<NatsConnection> {
    if (this.admin && !this.admin.isClosed()) return this.admin;
    this.admin = await connect({ servers: this.nodes.map((n) => n.url), timeout: 1_000, reconnectTimeWait: 100, maxReconnectAttempts: -1, pingInterval: 1_000, maxPingOut: 2 });
    return this.admin;
  }

  private async jsReady(size: number): Promise<boolean> {
    try {
      const jsm = await (await this.adminConnection()).jetstreamManager({ timeout: 1_000 });
      await jsm.streams.add({ name: 'PLACEMENT_PROBE', subjects: ['placement.probe'], num_replicas: size });
      await jsm.streams.delete('PLACEMENT_PROBE');
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Every election of `stream`'s leader from now on, as the new leader announces it (the advisory
   * the fleet itself reacts to): when the stream had a leader again, which a stream info may say
   * much later (it also needs the meta leader, which has elections of its own).
   */
  async watchElections(stream: string): Promise<Array<{ at: number; leader: string | null }>> {
    const seen: Array<{ at: number; leader: string | null }> = [];
    const nc = await this.adminConnection();
    watchLeaderElections(nc, stream, (leader) => seen.push({ at: Date.now(), leader }));
    await nc.flush();
    return seen;
  }

  /** The stream's leader and its replicas as the cluster reports them (null while it has no leader). */
  async streamCluster(stream: string): Promise<{ leader: string; replicas: Array<{ name: string; current: boolean }> } | null> {
    try {
      const nc = await this.adminConnection();
      const jsm = await nc.jetstreamManager({ timeout: 1_000 });
      const info = await jsm.streams.info(stream);
      const c = info.cluster;
      this.lastStreamInfo = `leader ${c?.leader ?? 'none'} (asked through ${nc.getServer()})`;
      if (!c?.leader) return null;
      return { leader: c.leader, replicas: (c.replicas ?? []).map((r) => ({ name: r.name, current: r.current })) };
    } catch (err) {
      this.lastStreamInfo = `${(err as Error).message} (asked through ${this.admin?.isClosed() === false ? this.admin.getServer() : 'no connection'})`;
      return null;
    }
  }

  /** What the last stream info answered, or how it failed, and through which server: for a failure's message. */
  lastStreamInfo = 'never asked';

  /** Waits until the stream has a leader and every follower is current (a restarted node has caught up). */
  async streamHealthy(stream: string, followers: number, timeoutMs = 30_000): Promise<void> {
    await waitFor(async () => {
      const c = await this.streamCluster(stream);
      return c !== null && c.replicas.length === followers && c.replicas.every((r) => r.current);
    }, timeoutMs, `stream ${stream} led with ${followers} current followers`);
  }

  node(name: string): NatsNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  async stop(): Promise<void> {
    await this.admin?.close().catch(() => undefined);
    for (const n of this.nodes) {
      if (n.proc) {
        this.resume(n);
        await this.kill(n);
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
