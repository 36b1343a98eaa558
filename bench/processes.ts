// Process helpers the benchmarks share: a free loopback port, waiting for /healthz, a clean stop,
// another process's CPU time and memory.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { request } from 'undici';
import { GATEWAY_NODE_FLAGS } from '../sandbox/stack/gateway-node-flags.js';

const ROOT = join(import.meta.dirname, '..');

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `${url}/healthz` every 100 ms until it answers 200, for at most `attempts` tries. */
// A process started with tsx on a loaded shared machine can take more than 30 s to listen.
export async function waitHealthy(url: string, timeoutMs = 120_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; ) {
    try {
      const r = await request(`${url}/healthz`);
      await r.body.dump();
      if (r.statusCode === 200) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not become healthy`);
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/**
 * CPU time (user and system, ms, all threads) and RSS (bytes) another process has used so far, from
 * /proc (Linux); null elsewhere or when the process is gone.
 */
export function procUsage(pid: number | undefined): { userMs: number; systemMs: number; rss: number } | null {
  if (pid === undefined) return null;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    // utime and stime, in clock ticks (USER_HZ = 100)
    return { userMs: Number(f[11]) * 10, systemMs: Number(f[12]) * 10, rss: rssKb * 1024 };
  } catch {
    return null;
  }
}

/** procUsage's user + system CPU, in ms. */
export function procCpuMs(pid: number | undefined): number | null {
  const u = procUsage(pid);
  return u === null ? null : u.userMs + u.systemMs;
}

const children = new Set<ChildProcess>();
let reaping = false;

/**
 * Stops `child` with the benchmark: on SIGINT or SIGTERM (Ctrl-C, `kill`, a timeout) every tracked
 * child still running gets SIGTERM before this process exits. Without it a benchmark stopped midway
 * left its servers running, holding ports and CPU that later runs and tests then met.
 */
export function stopWithBench<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!reaping) {
    reaping = true;
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
        process.exit(signal === 'SIGINT' ? 130 : 143);
      });
    }
  }
  return child;
}

/** Whether `taskset` can pin processes here (benches pin servers and load generators to their own CPUs). */
export function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The gateway as the local stack runs it (`npm start`: src/main.ts in a process of its own, with
 * GATEWAY_NODE_FLAGS), configured by `env`, on a free loopback port, once /healthz answers. Its
 * engine is a closed port unless `env` names one (a bench of reads: nothing of a stack answers it).
 */
export async function startGatewayProcess(env: Record<string, string>): Promise<{ url: string; pid: number | undefined; close(): Promise<void> }> {
  const port = await freePort();
  const child = stopWithBench(
    spawn(process.execPath, [...GATEWAY_NODE_FLAGS, '--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ENGINE_BASE_URL: `http://127.0.0.1:${await freePort()}`, LOG_LEVEL: 'error', ...env, PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  let errors = '';
  child.stderr!.on('data', (c: Buffer) => (errors = (errors + c.toString()).slice(-4_000)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await Promise.race([
      waitHealthy(url),
      new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before it listened: ${errors}`)))),
    ]);
  } catch (err) {
    await stop(child);
    throw err;
  }
  return { url, pid: child.pid, close: () => stop(child) };
}
