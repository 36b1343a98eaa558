// Child processes of the stack: each runs `node --import tsx <entry>` (one process per service,
// no wrapper processes) with the orphan guard preloaded, its output prefixed with the service name. Stopping sends SIGTERM and
// escalates to SIGKILL, so no child outlives the stack.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

const GUARD = fileURLToPath(new URL('./orphan-guard.ts', import.meta.url));

export interface Child {
  name: string;
  proc: ChildProcess;
  exited: Promise<number | null>;
  stop(graceMs?: number): Promise<void>;
}

/** How a process ended, for a person: "code 1", or "signal SIGKILL" (the exit code is null then). */
export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `signal ${signal}`;
  return `code ${code}`;
}

/** `nodeFlags`: flags for node itself, before the entry (the gateway's: gateway-node-flags.ts). */
export function startChild(name: string, entry: string, env: Record<string, string>, cwd: string, onUnexpectedExit: (name: string, how: string) => void, nodeFlags: readonly string[] = []): Child {
  const proc = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', '--import', GUARD, entry], {
    cwd,
    env: { ...process.env, ...env, STACK_PARENT_PID: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: a terminal's Ctrl-C reaches only the stack, which then stops the
    // children in order (instead of every process racing to exit at once).
    detached: true,
  });
  const tag = `[${name}]`.padEnd(11);
  for (const stream of [proc.stdout!, proc.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${tag}${line}\n`));
  }
  let stopping = false;
  const exited = new Promise<number | null>((resolve) => {
    proc.once('exit', (code, signal) => {
      if (!stopping) onUnexpectedExit(name, describeExit(code, signal));
      resolve(code);
    });
  });
  return {
    name,
    proc,
    exited,
    async stop(graceMs = 5000) {
      stopping = true;
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Polls `check` until it resolves true; rejects after `timeoutMs` or when `abort()` says so. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, abort: () => string | null): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const reason = abort();
    if (reason) throw new Error(`${what}: ${reason}`);
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`${what}: not healthy after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Port 0 means "any free port": find one now, so every service can be told the others' URLs. */
export async function choosePort(p = 0): Promise<number> {
  if (p !== 0) return p;
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolvePort(port));
    });
  });
}

/** true when `url` answers 200 within 2 s (a health check). */
export async function httpOk(url: string): Promise<boolean> {
  const res = await request(url, { headersTimeout: 2000, bodyTimeout: 2000 });
  await res.body.dump();
  return res.statusCode === 200;
}
