// Strict tsc over modules a user would write against the client's source (the documentation's
// examples, the compiler messages a user sees): one tsconfig, the package entries mapped to
// packages/client/src, `ws` to its typings.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');

/** Writes `dir/tsconfig.json` for `files` and runs tsc: its diagnostics, empty when everything compiles. */
export async function strictTsc(dir: string, files: string[]): Promise<string> {
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        target: 'es2022',
        module: 'esnext',
        moduleResolution: 'bundler',
        lib: ['es2023', 'dom'],
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        noEmit: true,
        skipLibCheck: true,
        paths: {
          '@gateway/client': [join(ROOT, 'packages/client/src/index.ts')],
          '@gateway/client/node': [join(ROOT, 'packages/client/src/node.ts')],
          '@gateway/client/react': [join(ROOT, 'packages/client/src/react.ts')],
          ws: [join(ROOT, 'node_modules/@types/ws/index.d.ts')],
        },
      },
      files,
    }),
  );
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  return run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir }).then(
    () => '',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
}
