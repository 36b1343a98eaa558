// The docs run as written: the quick start of docs/client.md, the package README's example and the
// guide's Node 20 recipe for LiveConnection, each ```ts block run as its own program (node + tsx,
// `@gateway/client` resolved to the package source) against a local stack: the reference engine,
// indexer and gateway with the faucet on, and a BTC book with bids (test/support/trading-stack.ts).
// The one change made to a block is the gateway address (the docs say :4000; the test's is free).
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startTradingStack, type TradingStack } from '../../support/trading-stack.js';

const ROOT = resolve(import.meta.dirname, '../../..');
// Inside the repository, so tsx resolves `@gateway/client` through tsconfig.json's paths.
const OUT = join(ROOT, 'test-artifacts', `docs-run-${process.pid}`);
const run = promisify(execFile);

/** The ```ts block of `file` that follows `heading` (the first after it). */
function blockAfter(file: string, heading: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const at = text.indexOf(heading);
  if (at < 0) throw new Error(`${file}: no "${heading}"`);
  const m = /```ts\n([\s\S]*?)```/.exec(text.slice(at));
  if (!m) throw new Error(`${file}: no ts block after "${heading}"`);
  return m[1]!;
}

let db: TestDatabase;
let stack: TradingStack;
beforeAll(async () => {
  db = await createTestDatabase();
  stack = await startTradingStack(db.url);
  mkdirSync(OUT, { recursive: true });
}, 120_000);
afterAll(async () => {
  rmSync(OUT, { recursive: true, force: true });
  await stack?.close();
  await db?.drop();
});

async function runBlock(name: string, block: string, prelude = ''): Promise<string> {
  expect(block).toContain("'http://127.0.0.1:4000'");
  const file = join(OUT, `${name}.ts`);
  writeFileSync(file, `${prelude}${block.replaceAll("'http://127.0.0.1:4000'", `'${stack.gateway.url}'`)}\nexport {};\n`);
  const { stdout } = await run(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, timeout: 60_000 });
  return stdout;
}

describe('the docs, run as written against a local stack', () => {
  it('docs/client.md quick start: book, tape, a funded party, a post-only bid at the best bid rests, then is cancelled', async () => {
    const out = await runBlock('quick-start', blockAfter('docs/client.md', '## Quick start: a trading screen'));
    expect(out).toMatch(/^funded 100000\.0000000000$/m);
    expect(out).toMatch(/^resting \[ 'buy 0\.0010000000 @ 59900\.0000000000 open' \]$/m);
    expect(out).toMatch(/^cancelled o-/m);
  }, 90_000);

  it('the package README: a funded party, a bid at the best bid rests, then is cancelled', async () => {
    const out = await runBlock('readme', blockAfter('packages/client/README.md', '# @gateway/client'));
    expect(out.trim().split('\n')).toEqual(['open', expect.stringMatching(/^cancelled o-/)]);
  }, 90_000);

  it("LiveConnection on Node 20 (no global WebSocket) works from the guide's recipe", async () => {
    // Node 20 as far as this matters: no global WebSocket, so without the option the watch would throw.
    const out = await runBlock('node20', blockAfter('docs/client.md', '**Node 20** has no global WebSocket'), 'delete (globalThis as { WebSocket?: unknown }).WebSocket;\n');
    expect(out).toMatch(/^stream live$/m);
    expect(out).toMatch(/^sockets 1$/m);
  }, 90_000);
});
