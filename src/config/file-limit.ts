// The process's open-file limit (the soft RLIMIT_NOFILE), read once at start. Every socket is a
// file: a process at its limit cannot accept a connection (a health probe included) nor open
// one (the database, the engine), so the gateway sizes its connection limits from it
// (src/http/connection-limits.ts connectionBudget). Node has no API for getrlimit: on Linux the
// kernel says it in /proc/self/limits; elsewhere a shell started by this process inherits the
// limit and `ulimit -n` prints it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The soft "Max open files" of a /proc/<pid>/limits text; null when unlimited or not found. */
export function parseProcLimits(text: string): number | null {
  const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
  if (!m || m[1] === 'unlimited') return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

function fromProc(): number | null | undefined {
  try {
    return parseProcLimits(readFileSync('/proc/self/limits', 'utf8'));
  } catch {
    return undefined; // no procfs: ask a shell
  }
}

function fromShell(): number | null {
  const r = spawnSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 2_000 });
  const text = (r.stdout ?? '').trim();
  return /^\d+$/.test(text) ? Number(text) : null;
}

let cached: number | null | undefined;

/** The soft open-file limit of this process (read once); null when unlimited or unknown. */
export function processFileLimit(): number | null {
  if (cached === undefined) {
    const proc = fromProc();
    cached = proc === undefined ? fromShell() : proc;
  }
  return cached;
}
