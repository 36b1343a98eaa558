// `src/main.ts` as a real process: the live runtime starts after listen, frames flow, and SIGTERM
// closes stream clients with 1001 before the process exits 0 — with the gateway process writing to
// the clients, and with fan-out worker processes (which must be gone afterwards too).
import { execFileSync, spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, waitFor, type ScriptedEngine } from '../../support/scripted-sse.js';
import { tick } from '../../unit/projections/fixtures.js';
import { connect } from '../../integration/stream/helpers.js';
import { isAlive } from '../../support/processes.js';

describe('gateway process', () => {
  let engine: ScriptedEngine | undefined;
  afterAll(async () => engine?.close());

  /** Pids of the fan-out workers whose parent is `pid` (Linux procps; tsx has a child of its own). */
  const workersOf = (pid: number): number[] => {
    try {
      const lines = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' }).split('\n');
      return lines.filter((l) => l.includes('fanout-worker')).map((l) => Number.parseInt(l.trim(), 10));
    } catch {
      return []; // ps exits 1 when there are none
    }
  };

  it.each(['0', '2'])('streams engine events and closes clients with 1001 on SIGTERM (WS_WORKERS=%s)', async (workers) => {
    engine?.close();
    engine = await startScriptedEngine();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, DATABASE_URL: '', WS_WORKERS: workers },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(out), 20_000, 'listening');
      const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
      await engine.waitFor(() => engine!.open === 1, 10_000);
      const c = await connect(url, 'kinds=engine.tick_start');
      engine.push(tick(1, '2026-11-21T10:00:00.000Z'));
      await c.waitFor((m) => m.some((x) => x.seq === 1));
      const workerPids = workersOf(child.pid!);
      expect(workerPids).toHaveLength(Number(workers));
      child.kill('SIGTERM');
      expect((await c.closed).code).toBe(1001);
      expect(await exited).toBe(0);
      await waitFor(() => workerPids.every((pid) => !isAlive(pid)), 5_000, 'fan-out workers gone');
    } finally {
      child.kill('SIGKILL');
    }
  }, 40_000);
});
