// The seed-data generator: `seed(sql, options)` fills a migrated indexer schema with a consistent,
// deterministic data set built by simulating trading (see model.ts). Scales to millions of rows
// through COPY (or multi-row INSERTs where COPY is unavailable).
import type { Sql } from 'postgres';
import { BulkWriter, type Table } from './writer.js';
import { Simulation, type SimOptions, type SimSummary } from './model.js';

export interface SeedOptions extends Partial<SimOptions> {
  /** Use COPY FROM STDIN (PostgreSQL servers); false uses multi-row INSERTs (PGlite). Default true. */
  copy?: boolean;
  /** Rows per bulk write. */
  chunkRows?: number;
}

export interface SeedResult extends SimSummary {
  counts: Record<Table, number>;
  elapsedMs: number;
}

export const DEFAULTS: SimOptions = {
  seed: 1,
  parties: 50,
  fills: 2_000,
  orders: 0,
  events: 0,
  batchEvery: 500,
  startMs: Date.UTC(2026, 10, 1),
};

export async function seed(sql: Sql, options: SeedOptions = {}): Promise<SeedResult> {
  const started = performance.now();
  const opts: SimOptions = {
    seed: options.seed ?? DEFAULTS.seed,
    parties: options.parties ?? DEFAULTS.parties,
    fills: options.fills ?? DEFAULTS.fills,
    orders: options.orders ?? DEFAULTS.orders,
    events: options.events ?? DEFAULTS.events,
    batchEvery: options.batchEvery ?? DEFAULTS.batchEvery,
    startMs: options.startMs ?? DEFAULTS.startMs,
  };
  if (opts.parties < 2) throw new Error('seed needs at least 2 parties');
  const out = new BulkWriter(sql, options.copy ?? true, options.chunkRows ?? 20_000);
  const summary = await new Simulation(opts, out).run();
  await out.flushAll();
  return { ...summary, counts: { ...out.counts }, elapsedMs: Math.round(performance.now() - started) };
}

export { MARKETS } from './model.js';
