/**
 * The database read pool's fair share (ADR 0380), a part of `bench:console`'s verify part: a
 * victim's small read (`/v1/batches?limit=5`) from 127.0.0.1 in a loop, alone and while another
 * client address (127.0.0.3) reads distinct 1 000-event pages of `/v1/events` on many connections
 * (bench/read-hog.ts, a process of its own). The same gateway, the same run; both windows report the
 * victim's p50 and p99 and how many reads it made.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { startGateway } from '../test/support/gateway.js';
import { median } from './stats.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface ReadFairnessResult {
  connections: number;
  windowMs: number;
  alone: { reads: number; p50: number; p99: number };
  underHog: { reads: number; p50: number; p99: number };
  /** The hog's answers by status. */
  hog: Record<string, number>;
}

const p99 = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(0.99 * s.length))] ?? NaN;
};

export async function readFairness(databaseUrl: string, maxSeq: number, connections: number, windowMs: number): Promise<ReadFairnessResult> {
  const gw = await startGateway({ DATABASE_URL: databaseUrl, AUTH_DISABLED: 'true', PROOF_BUILD_AHEAD: 'false' }, { listen: true, overrides: { live: null } });
  const victim = new Agent({ localAddress: '127.0.0.1', connections: 1 });
  const window = async (ms: number) => {
    const latencies: number[] = [];
    for (const end = Date.now() + ms; Date.now() < end; ) {
      const t = performance.now();
      const r = await request(`${gw.url}/v1/batches?limit=5`, { dispatcher: victim });
      await r.body.arrayBuffer();
      if (r.statusCode !== 200) throw new Error(`the victim's read answered ${r.statusCode}`);
      latencies.push(performance.now() - t);
      // Pacing: a reader that asks now and then, not a second load.
      await new Promise((r) => setTimeout(r, 20));
    }
    return { reads: latencies.length, p50: Math.round(median(latencies)), p99: Math.round(p99(latencies)) };
  };
  try {
    const alone = await window(windowMs);
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/read-hog.ts'), gw.url, '127.0.0.3', String(connections), String(windowMs + 1500), String(maxSeq)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    // The hog's connections open and its reads fill the pool first.
    await new Promise((r) => setTimeout(r, 1000));
    const underHog = await window(windowMs);
    await exited;
    return { connections, windowMs, alone, underHog, hog: JSON.parse(out.trim() || '{}') as Record<string, number> };
  } finally {
    await victim.close();
    await gw.close();
  }
}
