// The gateway as it ships: `tsc -p tsconfig.build.json` compiles it, and the compiled
// `src/main.js` runs under plain node (no tsx) against the reference engine and a real database:
// healthy, ready, serves a REST read, streams a frame, and stops cleanly on SIGTERM. Catches what
// only the build breaks (a `.ts` import specifier, a file outside the build, a dev-only dependency).
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { RunningEngine } from '../../sandbox/engine/index.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { waitFor } from '../support/scripted-sse.js';
import { eventually } from '../support/eventually.js';
import { fileScope, testEngine } from '../support/stacks.js';

// Inside node_modules/.cache, so the compiled files resolve the project's packages as dist/ would.
const cache = join(process.cwd(), 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const outDir = mkdtempSync(join(cache, 'gateway-build-'));

describe('the built gateway (node dist/src/main.js)', () => {
  let engine: RunningEngine;
  let db: TestDatabase;

  // Closed last started first: the engine, the database, then the build removed.
  const file = fileScope();
  beforeAll(async () => {
    file.onTestFinished(() => rmSync(outDir, { recursive: true, force: true }));
    await promisify(execFile)(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', outDir]);
    db = await createTestDatabase();
    file.onTestFinished(() => db.drop());
    engine = await testEngine(file, { tickMs: 200 });
  }, 120_000);

  it('starts, is ready, serves REST and the stream, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [join(outDir, 'src/main.js')], {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        DATABASE_URL: db.url,
        ENGINE_BASE_URL: engine.url,
        ENGINE_ADMIN_TOKEN: engine.adminToken,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await waitFor(() => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(out), 20_000, 'listening');
      const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
      let notReady: unknown = null;
      await eventually(
        async () => {
          const ready = await fetch(`${url}/readyz`);
          if (ready.status === 200) return true;
          notReady = await ready.json();
          return false;
        },
        { timeoutMs: 20_000, everyMs: 100, what: () => `ready (last /readyz: ${JSON.stringify(notReady)})` },
      );
      const fills = await fetch(`${url}/v1/fills?limit=1`);
      expect(fills.status).toBe(200);
      expect(await fills.json()).toMatchObject({ items: [], nextCursor: null });

      const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream?kinds=engine.tick_start`);
      const first = await new Promise<{ kind: string; seq: number }>((resolve, reject) => {
        ws.once('message', (data) => resolve(JSON.parse(String(data))));
        ws.once('error', reject);
      });
      expect(first.kind).toBe('engine.tick_start');
      expect(first.seq).toBeGreaterThan(0);
      const closed = once(ws, 'close');

      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
      expect(((await closed) as [number])[0]).toBe(1001);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);
});
