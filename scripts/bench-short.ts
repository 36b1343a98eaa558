// `npm run check:benches`: every `bench:*` script of package.json in its short mode (BENCH_SHORT=1,
// bench/short.ts), one after another, as CI runs them: each must exit 0 and leave
// docs/performance.md as it was. Timings are printed, never judged. Names as arguments run only
// those (`npm run check:benches -- bench:engine bench:rest`).
import { spawnSync } from 'node:child_process';
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

// Most of a short run is starting processes under tsx (the gateway, the engine, client processes:
// dozens of starts in all). Node's compile cache (NODE_COMPILE_CACHE, inherited by every process
// the benches start) keeps V8's compiled code of each module by its source's hash: a gateway's
// start took 2-4 times less with it, interleaved on the loaded 2-core machine. In the temp dir, so
// it outlives \`npm ci\`; set NODE_COMPILE_CACHE to use another directory.
const compileCache = process.env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'trading-gateway-bench-compile-cache');

const rows: Array<{ name: string; seconds: number; outcome: string }> = [];
const started = Date.now();
for (const name of names) {
  const before = readFileSync(DOC, 'utf8');
  const t0 = Date.now();
  console.log(`\n=== ${name} (BENCH_SHORT=1) ===`);
  const run = spawnSync('npm', ['run', '--silent', name], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, BENCH_SHORT: '1', NODE_COMPILE_CACHE: compileCache } });
  const seconds = (Date.now() - t0) / 1000;
  let outcome = run.status === 0 ? 'ok' : `failed (exit ${run.status ?? run.signal})`;
  if (run.status === 0 && readFileSync(DOC, 'utf8') !== before) outcome = 'failed: wrote docs/performance.md in a short run';
  rows.push({ name, seconds, outcome });
  console.log(`=== ${name}: ${outcome} in ${seconds.toFixed(1)} s ===`);
}
console.log('\nShort runs of the benchmarks (timings not judged):');
for (const r of rows) console.log(`  ${r.name.padEnd(20)} ${r.seconds.toFixed(1).padStart(7)} s  ${r.outcome}`);
console.log(`  ${'total'.padEnd(20)} ${((Date.now() - started) / 1000).toFixed(1).padStart(7)} s`);
process.exit(rows.every((r) => r.outcome === 'ok') ? 0 : 1);
