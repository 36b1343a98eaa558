// The engine's newest seq as its `GET /healthz` reports it (maxSeq): what the sources compare their
// resume point with and what the epoch is derived against. null when it does not say.
import type { EngineClient } from './client.js';

export async function engineHead(engine: Pick<EngineClient, 'health'>, timeoutMs: number): Promise<number | null> {
  const h = await engine.health(timeoutMs);
  return typeof h.maxSeq === 'number' ? h.maxSeq : null;
}
