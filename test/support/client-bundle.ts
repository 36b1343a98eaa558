// The published client bundled for a test page (esbuild, one IIFE for the browser): the named
// exports of packages/client/src/index.ts set on globalThis, for a page's `tab.evaluate` to call.
// Used by the browser tests of the client and by bench:console's verification part.
import { resolve } from 'node:path';
import { build } from 'esbuild';

const CLIENT_SRC = resolve(import.meta.dirname, '../../packages/client/src');

export async function clientBundle(names: readonly string[]): Promise<string> {
  const list = names.join(', ');
  const bundle = await build({
    stdin: { contents: `import { ${list} } from './index.ts'; Object.assign(globalThis, { ${list} });`, resolveDir: CLIENT_SRC, loader: 'ts' },
    bundle: true,
    format: 'iife',
    target: 'es2022',
    platform: 'browser',
    write: false,
  });
  return bundle.outputFiles[0]!.text;
}

/** The verification worker's program (packages/client/src/verify-worker.ts) as one script, for `new Worker(url)`: the console's. */
export { bundleVerifyWorker as verifyWorkerBundle } from '../../sandbox/console/server.js';
