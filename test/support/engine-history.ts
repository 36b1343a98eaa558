// A real history of the reference engine, for the commitment tests: three parties trading (a flip
// through zero, a self-trade, a stop loss, a withdrawal) over several commits, then a few events
// that no commit has claimed yet. Returns every event as the engine's SSE stream carries it.
import { startEngine } from '../../sandbox/engine/index.js';
import type { EngineEvent } from '../../src/contracts/engine-event.js';
import { fundedClient } from '../sandbox/engine/helpers.js';

export async function engineHistory(options: { rounds?: number } = {}): Promise<EngineEvent[]> {
  const engine = await startEngine({ port: 0, tickMs: 0, commitMs: 0 });
  try {
    const [ann, ben, cat] = await Promise.all(['ann', 'ben', 'cat'].map((h) => fundedClient(engine.url, engine.adminToken, '100000', h)));
    const book = { market: 'BTC-PERP', type: 'limit' } as const;
    engine.engine.commit();
    for (let r = 0; r < (options.rounds ?? 2); r++) {
      const p = 60000 + r * 100;
      await ben!.placeOrder({ ...book, side: 'sell', price: String(p), size: '0.5' });
      await ann!.placeOrder({ ...book, side: 'buy', price: String(p), size: '0.5' });
      engine.engine.tick();
      engine.engine.commit();
      await cat!.placeOrder({ ...book, side: 'buy', price: String(p + 50), size: '0.8' });
      await ann!.placeOrder({ ...book, side: 'sell', price: String(p + 50), size: '0.8' });
      await ben!.placeOrder({ ...book, side: 'sell', price: String(p + 60), size: '0.1' });
      await ben!.placeOrder({ ...book, side: 'buy', price: String(p + 60), size: '0.1' });
      await ann!.tpsl({ market: 'BTC-PERP', sl: { triggerPrice: String(p + 5000) } });
      await cat!.withdraw('5');
      engine.engine.tick();
      engine.engine.commit();
      await ann!.placeOrder({ ...book, side: 'buy', price: String(p + 50), size: '0.8' });
      await cat!.placeOrder({ ...book, side: 'sell', price: String(p + 40), size: '0.8' });
      engine.engine.commit();
    }
    await ann!.placeOrder({ ...book, side: 'buy', price: '50000', size: '0.01' });
    return engine.engine.log.eventsSince(0) as EngineEvent[];
  } finally {
    await engine.close();
  }
}
