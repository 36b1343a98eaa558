// Prints one plain closing line, `Tests: N passed, N failed, N skipped`, after Vitest's own
// summary, so tools that read a test run's last lines (CI) can count it. Before it, the slowest
// files of the run (collect + tests + hooks): where to look first to keep CI under its budget.
import type { Reporter, TestModule } from 'vitest/node';

const SLOWEST = 15;

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed++;
    }
    failed += unhandledErrors.length;
    const timed = testModules.map((mod) => {
      const d = mod.diagnostic();
      return { file: mod.relativeModuleId, s: (d.collectDuration + d.duration) / 1000 };
    });
    const slowest = timed.sort((a, b) => b.s - a.s).slice(0, SLOWEST);
    if (testModules.length > SLOWEST) {
      process.stdout.write(`\nSlowest ${slowest.length} of ${testModules.length} files:\n`);
      for (const { file, s } of slowest) process.stdout.write(`  ${s.toFixed(1).padStart(6)} s  ${file}\n`);
    }
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
