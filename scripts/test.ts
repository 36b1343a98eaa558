// `npm test`: every test file, as two vitest runs at once (ADR 0378). The files that mostly wait
// (test/support/waiting-files.ts: windows of real time, a third of a core or less) run two at a
// time in a lane of their own; the others on two workers, as before. Their output as it comes for
// the second, the waiting lane's whole when it ends; then one closing line over both,
// `Tests: N passed, N failed, N skipped` (what CI reads). Arguments go to both runs
// (`npm test -- test/e2e/stream` runs the matching files of each lane).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';

const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const args = process.argv.slice(2);
const SUMMARY = /^Tests: (\d+) passed, (\d+) failed, (\d+) skipped$/m;

interface LaneResult {
  name: string;
  code: number | null;
  output: string;
}

/** One vitest run over `selection`; `live`: its output is written as it comes (else kept for the end). */
function lane(name: string, selection: 'skip' | 'only', live: boolean): Promise<LaneResult> {
  const child = spawn(process.execPath, [vitest, 'run', '--passWithNoTests', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TEST_WAITING: selection, ...(process.stdout.isTTY && !process.env.NO_COLOR ? { FORCE_COLOR: '1' } : {}) },
  });
  const chunks: Buffer[] = [];
  const keep = (b: Buffer, to: NodeJS.WriteStream) => {
    chunks.push(b);
    if (live) to.write(b);
  };
  child.stdout.on('data', (b: Buffer) => keep(b, process.stdout));
  child.stderr.on('data', (b: Buffer) => keep(b, process.stderr));
  return new Promise((resolve) => {
    child.on('error', (err) => chunks.push(Buffer.from(`could not start vitest: ${err.message}\n`)));
    child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 128 : 1), output: Buffer.concat(chunks).toString('utf8') }));
  });
}

const waitingRun = lane('the files that mostly wait (two at a time)', 'only', false).then((r) => {
  process.stdout.write(`\n=== ${r.name}: exit ${r.code} ===\n${r.output}\n=== end of ${r.name} ===\n`);
  return r;
});
const results = await Promise.all([lane('the other files (two at a time)', 'skip', true), waitingRun]);

let passed = 0;
let failed = 0;
let skipped = 0;
for (const r of results) {
  const m = SUMMARY.exec(stripVTControlCharacters(r.output));
  if (m) {
    passed += Number(m[1]);
    failed += Number(m[2]);
    skipped += Number(m[3]);
  }
  // A run that failed without saying which test (a crash, a bad argument) counts as one failure.
  if (r.code !== 0 && (!m || Number(m[2]) === 0)) {
    failed++;
    process.stdout.write(`\n${r.name}: vitest exited ${r.code}${m ? '' : ' without a summary'}\n`);
  }
}
process.stdout.write(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exit(failed > 0 ? 1 : 0);
