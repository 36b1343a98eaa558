// A newcomer's first minutes: the README's first command brings the project's Node before npm
// installs anything (so a Node 20 machine prints no EBADENGINE), and packing the client leaves the
// working tree as it was (the tarball npm pack writes is ignored).
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');

describe('set-up', () => {
  it("the README's first command sources scripts/use-node.sh, then runs npm ci", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
    const firstLine = firstBlock.split('\n')[0]!;
    expect(firstLine).toMatch(/^\. scripts\/use-node\.sh && npm ci\b/);
    // No earlier mention tells the reader to run npm ci first.
    expect(readme.indexOf('npm ci')).toBeGreaterThan(readme.indexOf('. scripts/use-node.sh'));
  });

  it('npm pack in packages/client leaves git status clean', async () => {
    const client = join(ROOT, 'packages', 'client');
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts'], { cwd: client, env: { ...process.env, npm_config_update_notifier: 'false' } });
    const tarball = join(client, (JSON.parse(stdout) as Array<{ filename: string }>)[0]!.filename);
    try {
      const status = await run('git', ['status', '--porcelain', '--untracked-files=all', '--', '.'], { cwd: client });
      expect(status.stdout).toBe('');
    } finally {
      rmSync(tarball, { force: true });
    }
  }, 60_000);
});
