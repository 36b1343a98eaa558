// The alert rules are valid and their unit tests pass under Prometheus's own tool (CI runs the same
// two commands in .ci/run). Skipped with a warning where promtool is not installed, except in CI.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const DIR = join(resolve(import.meta.dirname, '../../..'), 'deploy', 'observability', 'prometheus');
const PROMTOOL = '/usr/bin/promtool';
const available = existsSync(PROMTOOL);
if (!available && process.env.CI) throw new Error('promtool is missing in CI (.ci/run installs Debian prometheus)');
if (!available) console.warn('[observability] promtool not installed: alert rule checks skipped');

describe.skipIf(!available)('Prometheus alert rules (promtool)', () => {
  it('check rules: every rule parses', async () => {
    const { stdout } = await run(PROMTOOL, ['check', 'rules', 'alerts.yml'], { cwd: DIR });
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('test rules: every alert fires where its test says, and only there', async () => {
    const { stdout } = await run(PROMTOOL, ['test', 'rules', 'alerts.test.yml'], { cwd: DIR });
    expect(stdout).toContain('SUCCESS');
  });
});
