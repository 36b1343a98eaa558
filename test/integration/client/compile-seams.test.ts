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

/** tsc's diagnostics for one module (empty when it compiles). */
async function compile(name: string, source: string): Promise<string> {
  const dir = join(OUT, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'main.ts'), source);
  return strictTsc(dir, ['main.ts']);
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
