// Rewrites test/durations.json, the known-long test files that test/support/sequencer.ts starts
// first (ADR 0375), from a full run's JSON report:
//   npx vitest run --reporter=default --reporter=json --outputFile=/tmp/vitest.json
//   npx tsx scripts/test-durations.ts /tmp/vitest.json
// Keeps the files of the isolated lanes that took 3 s or more (the unit lane always runs last).
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const report = process.argv[2];
if (!report) {
  console.error('usage: npx tsx scripts/test-durations.ts <vitest json report>');
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, 'utf8')) as { testResults: Array<{ name: string; startTime: number; endTime: number }> };
const rows = testResults
  .map((t) => ({ path: relative(ROOT, t.name).split('\\').join('/'), seconds: Math.round((t.endTime - t.startTime) / 1000) }))
  .filter((r) => r.seconds >= 3 && !r.path.startsWith('test/unit/'))
  .sort((a, b) => b.seconds - a.seconds || (a.path < b.path ? -1 : 1));
const list = {
  '//': 'Known-long test files and the seconds each took in a full run on 2 cores (first test to end). test/support/sequencer.ts starts them first, longest first. Rewrite: npx tsx scripts/test-durations.ts <vitest json report> (test/README.md).',
  files: Object.fromEntries(rows.map((r) => [r.path, r.seconds])),
};
writeFileSync(join(ROOT, 'test/durations.json'), `${JSON.stringify(list, null, 2)}\n`);
console.log(`test/durations.json: ${rows.length} files`);
