// The browser entry must not reach any `node:` module (or the Node-only entry): walks the import
// graph from packages/client/src/index.ts and fails on the first such import.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../../packages/client/src');
const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function graph(entry: string): { files: string[]; external: string[] } {
  const seen = new Set<string>();
  const external = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith('.')) visit(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      else external.add(spec);
    }
  };
  visit(join(SRC, entry));
  return { files: [...seen].map((f) => f.slice(SRC.length + 1)).sort(), external: [...external] };
}

describe('@gateway/client entries', () => {
  it('the browser entry imports nothing outside the package but its pure-JS dependencies, and no node: module', () => {
    const g = graph('index.ts');
    // crc-32 (SheetJS): the order book checksum (docs/client.md "Order books"); hash-wasm (its
    // WebAssembly) and @noble/hashes (plain JavaScript, where WebAssembly is refused): the synchronous
    // SHA-256 of verifyAccount (ADR 0300, ADR 0370). All browser-safe.
    expect(g.external.sort()).toEqual(['@noble/hashes/sha2.js', 'crc-32', 'hash-wasm']);
    expect(g.files).not.toContain('node.ts');
    expect(g.files).toEqual(
      expect.arrayContaining(['client.ts', 'ed25519.ts', 'signing.ts', 'stream.ts', 'transport.ts', 'positions.ts', 'toast.ts', 'errors.ts', 'retry.ts']),
    );
  });

  it('only the Node entry uses node:http / node:https', () => {
    expect(graph('node.ts').external.sort()).toEqual(['@noble/hashes/sha2.js', 'crc-32', 'hash-wasm', 'node:http', 'node:https']);
  });
});
