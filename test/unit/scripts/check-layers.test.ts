// The layering check reads real imports: the gateway passes it, and each kind of breach is caught.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLayers } from '../../../scripts/check-layers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('check-layers', () => {
  it('finds no breach in src/', () => {
    expect(checkLayers(join(import.meta.dirname, '../../../src'))).toEqual([]);
  });

  it('accepts imports that point down and within a folder', () => {
    const root = tree({
      'contracts/a.ts': 'export const a = 1;',
      'engine/b.ts': "import { a } from '../contracts/a.js';\nimport type { c } from './c.js';\nexport const b = a;",
      'engine/c.ts': 'export type c = number;',
      'http/d.ts': "export { b } from '../engine/b.js';",
    });
    expect(checkLayers(root)).toEqual([]);
  });

  it('reports an import that points up, type-only and re-exports included', () => {
    const root = tree({
      'http/errors.ts': 'export class ApiError extends Error {}',
      'auth/guard.ts': "import type { ApiError } from '../http/errors.js';\nexport type X = ApiError;",
      'engine/x.ts': "export * from '../stream/y.js';",
      'stream/y.ts': 'export const y = 1;',
    });
    expect(checkLayers(root).map((v) => `${v.from} → ${v.to}`)).toEqual(['auth/guard.ts → http/errors.ts', 'engine/x.ts → stream/y.ts']);
  });

  it('reports folders of one layer importing each other, and a folder in no layer', () => {
    const root = tree({
      'fleet/a.ts': "import { b } from '../auth/b.js';\nexport const a = b;",
      'auth/b.ts': 'export const b = 1;',
      'misc/c.ts': 'export const c = 1;',
    });
    const found = checkLayers(root);
    expect(found.map((v) => v.from)).toEqual(['fleet/a.ts', 'misc/c.ts']);
    expect(found[0]!.reason).toMatch(/must not import each other/);
    expect(found[1]!.reason).toMatch(/in no layer/);
  });
});
