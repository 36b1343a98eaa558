// Process helpers the benchmarks share: a free loopback port, waiting for /healthz, a clean stop.
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { request } from 'undici';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `${url}/healthz` every 100 ms until it answers 200, for at most `attempts` tries. */
export async function waitHealthy(url: string, attempts = 300): Promise<void> {
  for (let i = 0; i < attempts; i++) {
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
