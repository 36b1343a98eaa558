// `src/main.ts` as a real process: the live runtime starts after listen, frames flow, and SIGTERM
// closes stream clients with 1001 before the process exits 0.
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, waitFor, type ScriptedEngine } from '../../support/scripted-sse.js';
import { tick } from '../../unit/projections/fixtures.js';
import { connect } from '../../integration/stream/helpers.js';

describe('gateway process', () => {
  let engine: ScriptedEngine | undefined;
  afterAll(async () => engine?.close());

  it('streams engine events and closes clients with 1001 on SIGTERM', async () => {
    engine?.close();
    engine = await startScriptedEngine();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.token, DATABASE_URL: '' },
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
      child.kill('SIGTERM');
      expect((await c.closed).code).toBe(1001);
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 40_000);
});
