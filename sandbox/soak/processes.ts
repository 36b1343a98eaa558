// The soak's services as child processes: `node --import tsx <entry>` (one process per service, so a
// signal reaches exactly that service), with the stack's orphan guard preloaded, their output appended
// to one log file per service. A death the soak did not cause is recorded as a failure.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const GUARD = fileURLToPath(new URL('../stack/orphan-guard.ts', import.meta.url));

export interface Service {
  name: string;
  proc: ChildProcess;
  pid: number;
  exited: Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; the exit is expected. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL; the exit is expected. */
  kill(): Promise<void>;
}

export function startService(
  name: string,
  entry: string,
  env: Record<string, string>,
  opts: { cwd: string; logDir: string; onUnexpectedExit: (name: string, why: string) => void; onLine?: (line: string) => void; nodeFlags?: readonly string[] },
): Service {
  const proc = spawn(process.execPath, [...(opts.nodeFlags ?? []), '--import', 'tsx', '--import', GUARD, entry], {
    cwd: opts.cwd,
    env: { ...process.env, ...env, STACK_PARENT_PID: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // own process group: a terminal's Ctrl-C reaches only the soak, which stops them
  });
  const log = createWriteStream(join(opts.logDir, `${name}.log`), { flags: 'a' });
  let pending = '';
  proc.stdout!.on('data', (chunk: Buffer) => {
    log.write(chunk);
    if (!opts.onLine) return;
    pending += chunk.toString('utf8');
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      opts.onLine(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
    }
  });
  proc.stderr!.pipe(log, { end: false });
  let expected = false;
  const exited = new Promise<void>((resolve) => {
    proc.once('exit', (code, signal) => {
      if (!expected) opts.onUnexpectedExit(name, signal ? `signal ${signal}` : `code ${code}`);
      resolve();
    });
  });
  const gone = (): boolean => proc.exitCode !== null || proc.signalCode !== null;
  return {
    name,
    proc,
    pid: proc.pid!,
    exited,
    async stop(graceMs = 5000) {
      expected = true;
      if (gone()) return;
      try { process.kill(proc.pid!, 'SIGCONT'); } catch { /* gone */ } // a stopped process cannot handle SIGTERM
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      expected = true;
      if (gone()) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** Sends SIGSTOP or SIGCONT to one process we started (never to anything else). */
export function signal(service: Service, sig: 'SIGSTOP' | 'SIGCONT'): void {
  process.kill(service.pid, sig);
}
