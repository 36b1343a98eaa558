// What a user of the client sees from the compiler, checked with strict tsc against the client's
// source: the `ws` package's class is a WebSocketCtor (the docs' Node recipe), and a market literal
// that names no known market fails with a message saying so (not "not assignable to type 'never'").
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { strictTsc } from '../../support/strict-tsc.js';

const OUT = join(tmpdir(), `compile-seams-${process.pid}`);
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

/** The modules compiled, by name: one tsc run for all of them (a run costs seconds; the modules are independent). */
const MODULES: Record<string, string> = {
  'ws-recipe': `import { GatewayClient, StreamClient, OrderBookFeed } from '@gateway/client';
import { WebSocket } from 'ws';
const client = new GatewayClient({ baseUrl: 'http://127.0.0.1:4000' });
const a = new StreamClient({ client, onMessage: () => {}, WebSocket: (await import('ws')).WebSocket });
const b = new OrderBookFeed({ client, market: 'BTC-PERP', onBook: () => {}, WebSocket });
export { a, b };
`,
  market: `import { GatewayClient, StreamClient } from '@gateway/client';
const client = new GatewayClient({ baseUrl: 'http://127.0.0.1:4000' });
void client.placeOrder({ market: 'btc-perp', side: 'buy', type: 'limit', size: '1', price: '3000' });
new StreamClient({ client, markets: ['eth-perp'], onMessage: () => {} });
export {};
`,
};
let diagnostics: Promise<string> | undefined;

/**
 * tsc's diagnostics for one module (empty when it compiles): the lines of the shared run that start
 * with its file, their continuations, and whatever names no module (a failed run fails every module).
 */
async function compile(name: string): Promise<string> {
  diagnostics ??= (async () => {
    mkdirSync(OUT, { recursive: true });
    for (const [module, source] of Object.entries(MODULES)) writeFileSync(join(OUT, `${module}.ts`), source);
    return strictTsc(OUT, Object.keys(MODULES).map((module) => `${module}.ts`));
  })();
  const out: string[] = [];
  let mine = false;
  for (const line of (await diagnostics).split('\n')) {
    if (/^\S/.test(line)) mine = line.startsWith(`${name}.ts(`) || !Object.keys(MODULES).some((module) => line.startsWith(`${module}.ts(`));
    if (mine) out.push(line);
  }
  return out.join('\n');
}

describe('the client as the compiler shows it', () => {
  it("accepts the ws package's WebSocket class (the docs' Node recipe)", async () => {
    const out = await compile('ws-recipe');
    expect(out).toBe('');
  }, 60_000);

  it('says "unknown market" for a literal that names none, in orders and stream filters', async () => {
    const out = await compile('market');
    expect(out).toContain("unknown market btc-perp: use BTC-PERP, ETH-PERP, SOL-PERP, or market('btc-perp')");
    expect(out).toContain('unknown market eth-perp');
    expect(out).not.toContain("'never'");
  }, 60_000);
});
