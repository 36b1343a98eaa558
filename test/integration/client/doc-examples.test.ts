// Every TypeScript example of docs/client.md and the package README compiles under strict tsc
// against the client's source, as a user would paste it. Each ```ts block is one module; names an
// example uses but the guide defines elsewhere (the `client` of the first example, the app's own
// `show…` callbacks) are declared for it, with their types, only when the block does not define them.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { strictTsc } from '../../support/strict-tsc.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SOURCES = ['docs/client.md', 'packages/client/README.md'];
const OUT = join(tmpdir(), `doc-examples-${process.pid}`);

/** Names the guide defines in one example and uses in others, or leaves to the application. */
const CONTEXT: Record<string, string> = {
  client: "declare const client: import('@gateway/client').GatewayClient;",
  party: "declare const party: import('@gateway/client').PartySigner;",
  signer: "declare const signer: import('@gateway/client').PartySigner;",
  showRejection: 'declare function showRejection(code: string): void;',
  show: 'declare function show(...values: unknown[]): void;',
  bootstrapAgain: 'declare function bootstrapAgain(): void;',
};

export function extractBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
}

function defines(block: string, name: string): boolean {
  return new RegExp(`\\b(const|let|var|function|class)\\s+(\\{[^}]*\\b${name}\\b[^}]*\\}|${name}\\b)`).test(block) || new RegExp(`import\\s*(type\\s*)?\\{[^}]*\\b${name}\\b`).test(block);
}

function moduleOf(block: string): string {
  const context = Object.entries(CONTEXT)
    .filter(([name]) => new RegExp(`\\b${name}\\b`).test(block) && !defines(block, name))
    .map(([, decl]) => decl);
  return [...context, block, 'export {};', ''].join('\n');
}

describe('documentation examples', () => {
  it('extracts the examples (the guide has them)', () => {
    expect(extractBlocks(readFileSync(join(ROOT, 'docs/client.md'), 'utf8')).length).toBeGreaterThanOrEqual(6);
  });

  it('every ```ts block of docs/client.md and the client README compiles under strict tsc', async () => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    const files: string[] = [];
    for (const source of SOURCES) {
      extractBlocks(readFileSync(join(ROOT, source), 'utf8')).forEach((block, i) => {
        const file = `${source.replace(/[^a-z0-9]+/gi, '-')}-${i + 1}.ts`;
        writeFileSync(join(OUT, file), moduleOf(block));
        files.push(file);
      });
    }
    const result = await strictTsc(OUT, files);
    expect(result).toBe('');
    rmSync(OUT, { recursive: true, force: true });
  }, 120_000);
});
