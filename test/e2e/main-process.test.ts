// The real entry point: a bad variable stops the process with one clear line and a non-zero exit;
// good settings listen on PORT and shut down cleanly on SIGTERM.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fleetServices, REDIS_URL, waitFor } from '../support/fleet.js';
import { eventually } from '../support/eventually.js';

const TSX = ['--import', 'tsx', 'src/main.ts'];
const redisThere = await fleetServices({ redis: true });

function run(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, TSX, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr, stdout }));
  });
}

async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  return port;
}

/** Polls /healthz for up to 10 s. */
async function healthy(port: number): Promise<boolean> {
  return eventually(() => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false), { timeoutMs: 30_000, everyMs: 100 }).then(
    () => true,
    () => false,
  );
}

// A process started under load (three test files at once on two cores) may take well over 10 s to listen.
describe('src/main.ts', { timeout: 60_000 }, () => {
  it.each([
    ['WS_ORDERBOOK_POLL_MS', 'abc'],
    ['ENGINE_BASE_URL', 'notaurl'],
    ['NODE_ENV', 'prod'],
  ])('exits non-zero with one line naming %s', async (name, value) => {
    const { code, stderr } = await run({ [name]: value });
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(name);
    expect(lines[0]).toContain(value);
  });

  it('listens on PORT, answers /healthz and stops on SIGTERM with exit 0', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, TSX, {
      env: { PATH: process.env.PATH ?? '', PORT: String(port), LOG_LEVEL: 'warn', ENGINE_BASE_URL: 'http://127.0.0.1:9' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      expect(await healthy(port)).toBe(true);
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('exits when whatever read its output is gone, with logs still waiting to be written', async () => {
    // The logger as src/deps.ts makes it (pino's default destination, synchronous on fd 1). Its reader
    // stops reading (the socket fills; the logger keeps the rest), then goes away, then the process
    // exits: pino's exit flush meets EPIPE. sonic-boom 4 retried that for ever inside process.exit,
    // past every force-exit timer (a gateway whose stack was killed ran on for good in a CI run);
    // sonic-boom 5 (package.json overrides) throws it and the process ends.
    const CHILD = [
      "import pino from 'pino';",
      "const log = pino({ level: 'info' });",
      "for (let i = 0; i < 20000; i++) log.info({ i, pad: 'x'.repeat(100) }, 'filling');",
      "process.send('filled');",
      "process.on('message', () => { log.info('after the reader left'); process.exit(0); });",
    ].join('\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD], { stdio: ['ignore', 'pipe', 'ignore', 'ipc'] });
    try {
      child.stdout!.pause();
      await once(child, 'message');
      child.stdout!.destroy();
      const exited = once(child, 'exit');
      child.send('go');
      const outcome = await Promise.race([exited.then(() => 'exited'), new Promise((r) => setTimeout(() => r('still running after 10 s'), 10_000))]);
      expect(outcome).toBe('exited');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('without ENGINE_ADMIN_TOKEN, in production: a warning naming it at start, /readyz and /readyz/replica 503 saying the stream is disabled', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, TSX, {
      env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production', LOG_LEVEL: 'warn', ENGINE_BASE_URL: 'http://127.0.0.1:9' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    try {
      expect(await healthy(port)).toBe(true);
      const warning = stdout.split('\n').filter((l) => l.includes('ENGINE_ADMIN_TOKEN')).map((l) => JSON.parse(l));
      expect(warning).toHaveLength(1);
      expect(warning[0]).toMatchObject({ level: 40, setting: 'ENGINE_ADMIN_TOKEN' });
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      const body = (await ready.json()) as any;
      expect(ready.status).toBe(503);
      expect(body.stream.enabled).toBe(false);
      expect(body.reasons).toContain('ENGINE_ADMIN_TOKEN is not set: the stream is disabled');
      const replica = await fetch(`http://127.0.0.1:${port}/readyz/replica`);
      expect(replica.status).toBe(503);
      expect(await replica.json()).toMatchObject({ code: 'replica_not_ready', reasons: ['ENGINE_ADMIN_TOKEN is not set: the stream is disabled'], checks: { streamConfigured: false } });
    } finally {
      child.kill('SIGKILL');
    }
  });

  it.skipIf(!redisThere)('with Redis, reaches it at start: bff_redis_up is 1 before any request needs Redis', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, TSX, {
      env: { PATH: process.env.PATH ?? '', PORT: String(port), LOG_LEVEL: 'warn', ENGINE_BASE_URL: 'http://127.0.0.1:9', REDIS_URL, REDIS_PREFIX: `t_main_${process.pid}:` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      expect(await healthy(port)).toBe(true);
      // Only /metrics is asked: nothing else would have made the gateway talk to Redis.
      await waitFor(async () => /^bff_redis_up 1$/m.test(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()), 5_000, 'bff_redis_up 1');
    } finally {
      child.kill('SIGKILL');
    }
  });
});
