// The client as a user receives it: `npm run build:client`, `npm pack` of packages/client, the
// tarball installed into an empty folder with no access to this repository, then imported by the
// project's Node. Catches a package that ships without its build, its licence or an export it names.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const CLIENT = join(ROOT, 'packages', 'client');
const npm = (args: string[], cwd: string) => run('npm', args, { cwd, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } });

let dir: string;
let tarball: string;
/** The client's own dependencies, packed from this repository's node_modules (see beforeAll). */
let dependencyTarballs: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'packed-client-'));
  await npm(['run', 'build:client'], ROOT);
  const { stdout } = await npm(['pack', '--json', '--pack-destination', dir], CLIENT);
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>;
  tarball = join(dir, packed!.filename);
  // Installed offline, npm would ask the registry's metadata for each dependency range, which a
  // fresh machine's cache does not hold (`npm ci` fetches tarballs only): the dependencies go in
  // as tarballs packed from the installed copies, at the versions the client pins.
  const deps = Object.keys((JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {});
  dependencyTarballs = [];
  for (const name of deps) {
    const out = await npm(['pack', '--json', '--pack-destination', dir, join(ROOT, 'node_modules', name)], ROOT);
    dependencyTarballs.push(join(dir, (JSON.parse(out.stdout) as Array<{ filename: string }>)[0]!.filename));
  }
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed @gateway/client', () => {
  it('ships the Apache-2.0 LICENSE, the same text as the repository root', async () => {
    const { stdout } = await npm(['pack', '--dry-run', '--json', '--ignore-scripts'], CLIENT);
    const [listing] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
    const files = listing!.files.map((f) => f.path);
    expect(files).toContain('LICENSE');
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/node.d.ts');
    expect(files).toContain('dist/react.js'); // the React entry (react is an optional peer)
    expect(files).toContain('dist/react.d.ts');
    expect(readFileSync(join(CLIENT, 'LICENSE'), 'utf8')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
    expect(JSON.parse(readFileSync(join(CLIENT, 'package.json'), 'utf8')).license).toBe('Apache-2.0');
  }, 60_000);

  it('installs into a clean folder and imports under Node (both entries)', async () => {
    const app = join(dir, 'app');
    rmSync(app, { recursive: true, force: true });
    await run('mkdir', ['-p', app]);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }));
    await npm(['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...dependencyTarballs, tarball], app);
    expect(existsSync(join(app, 'node_modules', '@gateway', 'client', 'LICENSE'))).toBe(true);
    const probe = join(app, 'probe.mjs');
    writeFileSync(
      probe,
      `import { existsSync } from 'node:fs';
import * as browser from '@gateway/client';
import * as node from '@gateway/client/node';
// The verification worker's entry (a browser worker's program: resolved and shipped, not run here).
const worker = new URL(import.meta.resolve('@gateway/client/verify-worker'));
console.log(JSON.stringify({ browser: typeof browser.GatewayClient, node: typeof node.getUserMe, nodeClient: typeof node.GatewayClient, verifyWorker: existsSync(worker) }));`,
    );
    // process.execPath: the project's Node 24, the runtime a user of the package is told to have.
    const { stdout } = await run(process.execPath, [probe], { cwd: app });
    expect(JSON.parse(stdout.trim())).toEqual({ browser: 'function', node: 'function', nodeClient: 'function', verifyWorker: true });
    // CommonJS: require() of the ES module works (the "default" export condition; Node ≥ 20.19
    // loads a synchronous ES module through require), no ERR_PACKAGE_PATH_NOT_EXPORTED.
    const cjs = join(app, 'probe.cjs');
    writeFileSync(
      cjs,
      `const browser = require('@gateway/client');
const node = require('@gateway/client/node');
console.log(JSON.stringify({ browser: typeof browser.GatewayClient, node: typeof node.getUserMe }));`,
    );
    const required = await run(process.execPath, [cjs], { cwd: app });
    expect(JSON.parse(required.stdout.trim())).toEqual({ browser: 'function', node: 'function' });
  }, 120_000);
});
