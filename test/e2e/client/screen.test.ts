// The client pieces a trading screen is built from, on the whole stack (reference engine →
// reference indexer → PostgreSQL → gateway, the trading stack of the console's tests): one trade
// shape live and in REST.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient, StreamClient, toTrade, type Trade } from '../../../packages/client/src/index.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { SEED_MARKET, startTradingStack, type TradingStack } from '../../support/trading-stack.js';

async function until<T>(read: () => T | undefined | Promise<T | undefined>, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('a trading screen on the client (whole stack)', () => {
  let db: TestDatabase;
  let stack: TradingStack;
  let client: GatewayClient;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startTradingStack(db.url);
    client = new GatewayClient({ baseUrl: stack.gateway.url, retry: { retries: 0 } });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await db?.drop();
  });

  it('a trade has one shape: toTrade(live frame) equals the REST record of the same match', async () => {
    const live: Trade[] = [];
    const stream = new StreamClient({
      client,
      kinds: ['trade'],
      markets: [SEED_MARKET],
      onMessage: (m) => {
        if (m.source === 'live' && m.frame.kind === 'trade') live.push(toTrade(m.frame));
      },
    });
    stream.start();
    try {
      const first = await until(() => live[0], 'the snapshot trade');
      const rest = (await client.listTrades({ market: SEED_MARKET, limit: 10 })).items;
      expect(rest.find((t) => t.seq === first.seq)).toEqual(first);
      expect(Object.keys(first).sort()).toEqual(['createdAt', 'market', 'matchId', 'price', 'seq', 'side', 'size']);
    } finally {
      stream.stop();
    }
  });
});
