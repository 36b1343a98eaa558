// Rewrites test/durations.json, the known-long files that support/sequencer.ts starts first
// (ADR 0375), from the run it reports on:
//   npx vitest run --reporter=default --reporter=./test/support/durations-reporter.ts
// A file's seconds are what the summary reporter's "Slowest" list shows: collect + tests + hooks
// (a beforeAll that seeds a database or builds a package counts). Files of the isolated lanes at
// 5 s or more are listed; files this run did not run keep their entry, so run it on the full suite
// (or on the files that changed) on the 2-core machine.
import { readFileSync, writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

const LIST = new URL('../durations.json', import.meta.url);
const MIN_S = 5;

export default class DurationsReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const files = new Map(Object.entries((JSON.parse(readFileSync(LIST, 'utf8')) as { files: Record<string, number> }).files));
    for (const mod of testModules) {
      if (mod.project.config.isolate === false) continue;
      const d = mod.diagnostic();
      const seconds = Math.round((d.collectDuration + d.duration) / 1000);
      if (seconds >= MIN_S) files.set(mod.relativeModuleId, seconds);
      else files.delete(mod.relativeModuleId);
    }
    const sorted = [...files].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
    const list = {
      '//': 'Known-long test files and their seconds (collect + tests + hooks) in a full run on 2 cores. test/support/sequencer.ts starts them first, longest first. Rewrite: npx vitest run --reporter=default --reporter=./test/support/durations-reporter.ts (test/README.md).',
      files: Object.fromEntries(sorted),
    };
    writeFileSync(LIST, `${JSON.stringify(list, null, 2)}\n`);
    process.stdout.write(`test/durations.json: ${sorted.length} files at ${MIN_S} s or more\n`);
  }
}
