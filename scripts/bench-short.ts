// `npm run check:benches`: every `bench:*` script of package.json in its short mode (BENCH_SHORT=1,
// bench/short.ts), as CI runs them: each must exit 0 and leave docs/performance.md as it was.
// Timings are printed, never judged. Names as arguments run only those
// (`npm run check:benches -- bench:engine bench:rest`).
//
// Up to BENCH_SHORT_JOBS (default 3) run at once, longest first (ADR 0376): a short run mostly
// waits (process starts, fixed load windows; about a quarter of the two cores measured), and every
// bench takes free ports and names of its own. Each one's output is printed whole when it ends.
// BENCH_SHORT_JOBS=1 runs them one after another, as before.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const DOC = join(ROOT, 'docs/performance.md');
const scripts = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
const asked = process.argv.slice(2);
const names = asked.length > 0 ? asked : scripts.filter((s) => s.startsWith('bench:'));
const unknown = names.filter((n) => !scripts.includes(n));
if (unknown.length > 0) {
  console.error(`no such npm script: ${unknown.join(', ')}`);
  process.exit(2);
}
const jobs = Number(process.env.BENCH_SHORT_JOBS ?? 3);
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error(`BENCH_SHORT_JOBS must be a positive integer, not ${process.env.BENCH_SHORT_JOBS}`);
  process.exit(2);
}

// Seconds of each short run, measured alone on the 2-core CI machine: the longest start first so
// that none of them starts last and runs alone (names not here start after these, in their order).
const SECONDS: Record<string, number> = {
  'bench:stream': 50, 'bench:tracing': 26, 'bench:rest': 24, 'bench:isolation': 21, 'bench:budgets': 21,
  'bench:proxy': 19, 'bench:fleet': 18, 'bench:capacity': 11, 'bench:console': 9, 'bench:engine': 4,
  'bench:history': 1.4, 'bench:account': 1,
};
const queue = [...names].sort((a, b) => (SECONDS[b] ?? 0) - (SECONDS[a] ?? 0));

// Most of a short run is starting processes under tsx (the gateway, the engine, client processes:
// dozens of starts in all). Node's compile cache (NODE_COMPILE_CACHE, inherited by every process
// the benches start) keeps V8's compiled code of each module by its source's hash: a gateway's
// start took 2-4 times less with it, interleaved on the loaded 2-core machine. In the temp dir, so
// it outlives \`npm ci\`; set NODE_COMPILE_CACHE to use another directory.
const compileCache = process.env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'trading-gateway-bench-compile-cache');

const doc = readFileSync(DOC, 'utf8');
const rows = new Map<string, { seconds: number; outcome: string }>();
const started = Date.now();

function run(name: string): Promise<void> {
  const t0 = Date.now();
  const child = spawn('npm', ['run', '--silent', name], { cwd: ROOT, stdio: jobs === 1 ? 'inherit' : ['ignore', 'pipe', 'pipe'], env: { ...process.env, BENCH_SHORT: '1', NODE_COMPILE_CACHE: compileCache } });
  const out: Buffer[] = [];
  child.stdout?.on('data', (b: Buffer) => out.push(b));
  child.stderr?.on('data', (b: Buffer) => out.push(b));
  if (jobs === 1) console.log(`\n=== ${name} (BENCH_SHORT=1) ===`);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      const seconds = (Date.now() - t0) / 1000;
      let outcome = code === 0 ? 'ok' : `failed (exit ${code ?? signal})`;
      // A backstop (writeDocsFile writes nothing in a short run): with several at once, the first to
      // end after a write is the one named, so the message says when it was seen, not who wrote it.
      if (code === 0 && readFileSync(DOC, 'utf8') !== doc) outcome = jobs === 1 ? 'failed: wrote docs/performance.md in a short run' : 'failed: docs/performance.md changed by a short run (seen as this one ended)';
      if (jobs > 1) process.stdout.write(`\n=== ${name} (BENCH_SHORT=1) ===\n${Buffer.concat(out).toString()}`);
      console.log(`=== ${name}: ${outcome} in ${seconds.toFixed(1)} s ===`);
      rows.set(name, { seconds, outcome });
      resolve();
    });
  });
}

async function lane(): Promise<void> {
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) await run(name);
}
await Promise.all(Array.from({ length: Math.min(jobs, names.length) }, lane));

console.log(`\nShort runs of the benchmarks, ${jobs} at a time (timings not judged):`);
for (const name of names) {
  const r = rows.get(name)!;
  console.log(`  ${name.padEnd(20)} ${r.seconds.toFixed(1).padStart(7)} s  ${r.outcome}`);
}
console.log(`  ${'total'.padEnd(20)} ${((Date.now() - started) / 1000).toFixed(1).padStart(7)} s`);
process.exit([...rows.values()].every((r) => r.outcome === 'ok') ? 0 : 1);
