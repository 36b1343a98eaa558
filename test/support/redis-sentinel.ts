// A Redis primary, two replicas and three sentinels of a test's own, on free loopback ports
// (Debian's redis-server, `--sentinel` for the sentinels): the machine's Redis is shared by other
// tests and is never touched. Sentinels judge a primary down after 1 s, so a failover takes a few
// seconds. Two replicas, as docs/operations.md asks for production: after a failover the new
// primary still has one replica to acknowledge writes (REDIS_WAIT_REPLICAS).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { closedPort, tcpReachable, waitFor } from './fleet.js';

export const REDIS_SERVER = '/usr/bin/redis-server';
export const sentinelAvailable = existsSync(REDIS_SERVER);
if (!sentinelAvailable && process.env.CI) throw new Error(`${REDIS_SERVER} is missing in CI (.ci/run installs redis-server)`);
if (!sentinelAvailable) console.warn(`\n*** SKIPPED: the Redis Sentinel tests need ${REDIS_SERVER} ***\n`);

export interface SentinelSet {
  name: string;
  primaryPort: number;
  replicaPorts: number[];
  sentinelPorts: number[];
  /** When the primary was started (ms): its replay memory is refused for one signing window after (docs/adr/0155). */
  startedAt: number;
  /** REDIS_SENTINELS for a gateway. */
  sentinels: string;
  /** Kills the primary (SIGKILL) and resolves with the time it was killed. */
  killPrimary(): Promise<number>;
  /** The pid of the redis-server on `port` (to pause it). */
  pidOf(port: number): Promise<number>;
  /** The primary the sentinels name now. */
  primaryNow(): Promise<number>;
  stop(): Promise<void>;
}

interface Proc {
  proc: ChildProcess;
  exited: Promise<void>;
}

function start(args: string[]): Proc {
  const proc = spawn(REDIS_SERVER, args, { stdio: 'ignore' });
  return { proc, exited: new Promise<void>((r) => proc.once('exit', () => r())) };
}

export async function startSentinelSet(name = 'gateway'): Promise<SentinelSet> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-sentinel-'));
  const primaryPort = await closedPort();
  const replicaPorts = [await closedPort(), await closedPort()];
  // No delay before a diskless full sync (the default waits 5 s for more replicas to join).
  const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--repl-diskless-sync-delay', '0'];
  const procs: Proc[] = [];
  const startedAt = Date.now();
  const primary = start(['--port', String(primaryPort), ...common]);
  procs.push(primary);
  await waitFor(() => tcpReachable(`redis://127.0.0.1:${primaryPort}`), 10_000, 'primary');
  for (const port of replicaPorts) {
    procs.push(start(['--port', String(port), ...common, '--replicaof', '127.0.0.1', String(primaryPort)]));
    await waitFor(() => tcpReachable(`redis://127.0.0.1:${port}`), 10_000, 'replica');
  }
  const sentinelPorts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await closedPort();
    const conf = join(dir, `sentinel-${i}.conf`);
    // Sentinel rewrites its config file: one each, in the test's directory.
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${primaryPort} 2`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 5000`,
        `sentinel parallel-syncs ${name} 1`,
        '',
      ].join('\n'),
    );
    procs.push(start([conf, '--sentinel']));
    sentinelPorts.push(port);
  }
  const ask = async <T>(port: number, fn: (r: Redis) => Promise<T>): Promise<T> => {
    const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined); // a dead server is the caller's answer (rejected command)
    try {
      await r.connect();
      return await fn(r);
    } finally {
      r.disconnect();
    }
  };
  // Every sentinel knows the replica and the other sentinels before the test may fail anything over.
  await waitFor(
    async () => {
      for (const port of sentinelPorts) {
        const ok = await ask(port, async (r) => {
          const replicas = (await r.call('SENTINEL', 'REPLICAS', name)) as unknown[];
          const others = (await r.call('SENTINEL', 'SENTINELS', name)) as unknown[];
          return replicas.length === 2 && others.length === 2;
        }).catch(() => false);
        if (!ok) return false;
      }
      return true;
    },
    30_000,
    'sentinels know the replica and each other',
  );
  // ... and the replicas are in sync.
  for (const port of replicaPorts) await waitFor(async () => (await ask(port, (r) => r.info('replication'))).includes('master_link_status:up'), 10_000, 'replica in sync');

  return {
    name,
    startedAt,
    primaryPort,
    replicaPorts,
    sentinelPorts,
    sentinels: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    async killPrimary() {
      primary.proc.kill('SIGKILL');
      await primary.exited;
      return Date.now();
    },
    async pidOf(port: number) {
      return Number(/process_id:(\d+)/.exec(await ask(port, (r) => r.info('server')))![1]);
    },
    async primaryNow() {
      const [, port] = (await ask(sentinelPorts[0]!, (r) => r.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name))) as [string, string];
      return Number(port);
    },
    async stop() {
      for (const p of procs) p.proc.kill('SIGKILL');
      await Promise.all(procs.map((p) => p.exited));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
