// A child of the stack that dies by a signal is reported with the signal's name (its exit code is
// null then, and "code null" told an operator nothing).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild } from '../../../sandbox/stack/children.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = mkdtempSync(join(tmpdir(), 'stack-child-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(source: string, kill?: NodeJS.Signals): Promise<string> {
  const entry = join(dir, `child-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(entry, source);
  return new Promise((resolve) => {
    const child = startChild('probe', entry, {}, ROOT, (_name, how) => resolve(how));
    if (kill) child.proc.stdout!.once('data', () => child.proc.kill(kill));
  });
}

describe('stack child exits', () => {
  it('names the signal that killed a child', async () => {
    expect(await run("console.log('up'); setInterval(() => {}, 1000);", 'SIGKILL')).toBe('signal SIGKILL');
  }, 30_000);

  it('names the exit code of a child that exits by itself', async () => {
    expect(await run('process.exit(3);')).toBe('code 3');
  }, 30_000);
});
