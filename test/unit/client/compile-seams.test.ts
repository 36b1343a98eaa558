// What a user of the client sees from the compiler, checked with strict tsc against the client's
// source: the `ws` package's class is a WebSocketCtor (the docs' Node recipe), and a market literal
// that names no known market fails with a message saying so (not "not assignable to type 'never'").
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const OUT = join(tmpdir(), `compile-seams-${process.pid}`);
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

/** tsc's diagnostics for one module (empty when it compiles). */
async function compile(name: string, source: string): Promise<string> {
  const dir = join(OUT, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'main.ts'), source);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        target: 'es2022',
        module: 'esnext',
        moduleResolution: 'bundler',
        lib: ['es2023', 'dom'],
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        noEmit: true,
        skipLibCheck: true,
        paths: { '@gateway/client': [join(ROOT, 'packages/client/src/index.ts')], ws: [join(ROOT, 'node_modules/@types/ws/index.d.ts')] },
      },
      files: ['main.ts'],
    }),
  );
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  return run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { cwd: dir }).then(
    () => '',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
}

describe('the client as the compiler shows it', () => {
  it("accepts the ws package's WebSocket class (the docs' Node recipe)", async () => {
    const out = await compile(
      'ws',
      `import { GatewayClient, StreamClient, OrderBookFeed } from '@gateway/client';
import { WebSocket } from 'ws';
const client = new GatewayClient({ baseUrl: 'http://127.0.0.1:4000' });
const a = new StreamClient({ client, onMessage: () => {}, WebSocket: (await import('ws')).WebSocket });
const b = new OrderBookFeed({ client, market: 'BTC-PERP', onBook: () => {}, WebSocket });
export { a, b };
`,
    );
    expect(out).toBe('');
  }, 60_000);

  it('says "unknown market" for a literal that names none, in orders and stream filters', async () => {
    const out = await compile(
      'market',
      `import { GatewayClient, StreamClient } from '@gateway/client';
const client = new GatewayClient({ baseUrl: 'http://127.0.0.1:4000' });
void client.placeOrder({ market: 'btc-perp', side: 'buy', type: 'limit', size: '1', price: '3000' });
new StreamClient({ client, markets: ['eth-perp'], onMessage: () => {} });
export {};
`,
    );
    expect(out).toContain("unknown market btc-perp: use BTC-PERP, ETH-PERP, SOL-PERP, or market('btc-perp')");
    expect(out).toContain('unknown market eth-perp');
    expect(out).not.toContain("'never'");
  }, 60_000);
});
