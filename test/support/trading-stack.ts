// A whole trading stack in this process for the console's browser test and benchmark: reference
// engine → reference indexer → PostgreSQL → gateway (auth on, CORS *), plus the web console on
// its own origin, and a seeded market (a trade for the chart and resting orders on both sides).
import { startEngine, type RunningEngine } from '../../sandbox/engine/index.js';
import type { AccountingFault } from '../../sandbox/engine/accounts.js';
import { startIndexer, type RunningIndexer } from '../../sandbox/indexer/indexer.js';
import { startConsole, type ConsoleServer } from '../../sandbox/console/server.js';
import { GatewayClient, localParty, type PartySigner } from '../../packages/client/src/index.js';
import type { LiveRuntime } from '../../src/live.js';
import { startGateway, type TestGateway } from './gateway.js';

export interface TradingStack {
  engine: RunningEngine;
  indexer: RunningIndexer;
  gateway: TestGateway;
  console: ConsoleServer;
  /** The market maker of the seed, with a session. */
  maker: { signer: PartySigner; client: GatewayClient };
  close(): Promise<void>;
}

export const SEED_MARKET = 'BTC-PERP';

export async function startTradingStack(databaseUrl: string, options: { corruptUserBatch?: number; fault?: AccountingFault } = {}): Promise<TradingStack> {
  const { fault, ...indexerOptions } = options;
  // fault: the engine's ENGINE_CORRUPT (a deliberate accounting fault, committed faithfully).
  const engine = await startEngine({ port: 0, tickMs: 0, commitMs: 0, fault: fault ?? null });
  // corruptUserBatch: the indexer's INDEXER_CORRUPT_USER_BATCH (the chain records a wrong root for that user batch).
  const indexer = await startIndexer({ databaseUrl, engineUrl: engine.url, adminToken: engine.adminToken, migrate: false, ...indexerOptions });
  const gateway = await startGateway(
    { DATABASE_URL: databaseUrl, ENGINE_BASE_URL: engine.url, ENGINE_ADMIN_TOKEN: engine.adminToken, FAUCET_ENABLED: 'true', FAUCET_AMOUNT: '100000', RATE_LIMIT_MAX: '100000', CORS_ORIGINS: '*', WS_ORDERBOOK_POLL_MS: '100' },
    { listen: true },
  );
  await (gateway.deps.live as LiveRuntime).start();
  const consoleServer = await startConsole({ gatewayUrl: gateway.url });

  // Seed: a maker and a taker trade once (a bar on the chart, a line in the tape), then the maker
  // rests orders on both sides (a book with levels).
  const maker = { signer: await localParty('maker'), client: new GatewayClient({ baseUrl: gateway.url, retry: { retries: 0 } }) };
  const taker = { signer: await localParty('taker'), client: new GatewayClient({ baseUrl: gateway.url, retry: { retries: 0 } }) };
  for (const p of [maker, taker]) {
    const s = await p.client.createSession(p.signer);
    if (!s.ok) throw new Error(`seed session: ${s.code}`);
    await p.client.faucet(p.signer.party);
  }
  const place = async (c: GatewayClient, side: 'buy' | 'sell', price: string, size: string) => {
    const r = await c.placeOrder({ market: SEED_MARKET, side, type: 'limit', size, price });
    if (!r.ok) throw new Error(`seed order: ${r.code} ${r.error}`);
  };
  await place(maker.client, 'sell', '60000', '0.01');
  await place(taker.client, 'buy', '60000', '0.01');
  await place(maker.client, 'sell', '60100', '0.5');
  await place(maker.client, 'sell', '60200', '0.5');
  await place(maker.client, 'buy', '59900', '0.5');
  await place(maker.client, 'buy', '59800', '0.5');
  await indexer.waitFor(engine.engine.log.maxSeq, 10_000);

  return {
    engine,
    indexer,
    gateway,
    console: consoleServer,
    maker,
    async close() {
      await consoleServer.close();
      await gateway.close();
      await indexer.close();
      await engine.close();
    },
  };
}
