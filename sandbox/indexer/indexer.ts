// startIndexer(): the reference indexer. Migrates the database, mirrors the engine's markets,
// follows the admin event stream from its own high-water mark, and writes events plus every
// projection in one transaction per batch (events that arrive within `batchWindowMs` are batched).
import type postgres from 'postgres';
import { createParser } from 'eventsource-parser';
import { request } from 'undici';
import { migrate } from '../../schema/migrate.js';
import { Follower, sleep } from './follower.js';
import type { ProjectionSettings } from './projection.js';
import type { EngineEvent, MarketRow } from './rows.js';
import { connect, IndexerStore } from './store.js';

export interface IndexerLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface IndexerOptions {
  databaseUrl: string;
  engineUrl: string;
  adminToken: string;
  /** Operator whose vault the indexer records (default `operator-1`). */
  vaultOperator?: string;
  /** Corrupt the chain root of the n-th user batch (1-based, commit order); 0/undefined = never. */
  corruptUserBatch?: number;
  /** Corrupt the chain root of this batch_num's manifest; 0/undefined = never. */
  corruptBatch?: number;
  /** Tests of verifiers only: show this party's account altered in the mirror (projection.ts). */
  corruptAccountOf?: string;
  /** How long to wait for more events before writing a batch (default 5 ms). */
  batchWindowMs?: number;
  /** Most events per transaction (default 5000). */
  maxBatch?: number;
  /** Apply schema/migrations first (default true). */
  migrate?: boolean;
  /**
   * The database holds a longer history than the engine (the engine restarted with empty memory):
   * `wipe` clears the mirror and starts over, `wait` logs and retries until an operator acts.
   */
  onEngineReset?: 'wipe' | 'wait';
  logger?: IndexerLogger;
}

export interface IndexerStats {
  lastSeq: number;
  eventsApplied: number;
  batches: number;
  largestBatch: number;
  skipped: number;
  connects: number;
  connected: boolean;
  wipes: number;
}

export interface RunningIndexer {
  lastSeq(): number;
  /** Resolves once every event up to `seq` is committed; rejects after `timeoutMs`. */
  waitFor(seq: number, timeoutMs?: number): Promise<void>;
  stats(): IndexerStats;
  /** The indexer's own connection (tests read the tables through it). */
  sql: postgres.Sql;
  close(): Promise<void>;
}

const silent: IndexerLogger = { info() {}, warn() {}, error() {} };

export async function startIndexer(options: IndexerOptions): Promise<RunningIndexer> {
  const log = options.logger ?? silent;
  const engineUrl = options.engineUrl.replace(/\/+$/, '');
  const settings: ProjectionSettings = {
    vaultOperator: options.vaultOperator ?? 'operator-1',
    corruptUserBatch: options.corruptUserBatch ?? 0,
    corruptBatch: options.corruptBatch ?? 0,
    corruptAccountOf: options.corruptAccountOf,
  };
  const sql = connect(options.databaseUrl);
  try {
    if (options.migrate ?? true) {
      const applied = await migrate(sql);
      if (applied.length > 0) log.info({ applied }, 'indexer migrations applied');
    }
  } catch (err) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw err;
  }
  const store = new IndexerStore(sql, settings);
  await store.init();

  const stats: IndexerStats = { lastSeq: store.highWater, eventsApplied: 0, batches: 0, largestBatch: 0, skipped: 0, connects: 0, connected: false, wipes: 0 };
  const queue: EngineEvent[] = [];
  const maxBatch = options.maxBatch ?? 5000;
  const windowMs = options.batchWindowMs ?? 5;
  const highWater = maxBatch * 10;
  let stopped = false;
  // Held in an object: TypeScript does not see closures reassigning plain `let` callbacks.
  const signals: { wake: (() => void) | null; drained: (() => void) | null } = { wake: null, drained: null };
  const waiters = new Set<{ seq: number; resolve(): void }>();
  // Serialises batch writes with wipes (an engine reset must not race a write of old events).
  let lock: Promise<void> = Promise.resolve();
  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = lock.then(fn);
    lock = run.then(
      () => {},
      () => {},
    );
    return run;
  };

  const follower = new Follower({
    engineUrl,
    adminToken: options.adminToken,
    from: store.highWater,
    log: (level, msg, extra) => log[level](extra ?? {}, msg),
    sink: (events) => {
      queue.push(...events);
      signals.wake?.();
      if (queue.length < highWater) return;
      return new Promise<void>((r) => (signals.drained = r)); // backpressure: stop reading until written
    },
    beforeConnect: async (since) => {
      const reason = await engineHistoryChanged(engineUrl, options.adminToken, sql, since);
      if (reason) {
        if (options.onEngineReset !== 'wipe') {
          log.error({ indexedSeq: since, reason }, 'the engine history no longer matches the mirror (engine reset?); waiting');
          throw new Error('engine reset detected');
        }
        log.warn({ indexedSeq: since, reason }, 'engine history restarted: wiping the mirror');
        await exclusive(async () => {
          queue.length = 0;
          await store.wipe();
        });
        stats.wipes++;
        follower.resetTo(0);
      }
      const markets = await getJson<{ markets?: unknown }>(engineUrl, '/v1/markets');
      await exclusive(() => store.upsertMarkets(toMarketRows(markets.markets)));
    },
  });

  const writer = (async () => {
    let backoff = 50;
    while (!stopped) {
      if (queue.length === 0) {
        await new Promise<void>((r) => (signals.wake = r));
        signals.wake = null;
        continue;
      }
      if (queue.length < maxBatch && windowMs > 0) await sleep(windowMs);
      const batch = queue.slice(0, maxBatch);
      try {
        const result = await exclusive(() => store.apply(batch));
        queue.splice(0, batch.length);
        stats.eventsApplied += result.applied;
        stats.batches++;
        stats.largestBatch = Math.max(stats.largestBatch, result.applied);
        stats.skipped += result.skipped.length;
        stats.lastSeq = store.highWater;
        for (const s of result.skipped) log.warn(s, 'event payload could not be projected; kept in events only');
        for (const w of waiters) if (w.seq <= store.highWater) w.resolve();
        backoff = 50;
        if (queue.length < highWater / 2 && signals.drained) {
          signals.drained();
          signals.drained = null;
        }
      } catch (err) {
        if (stopped) break;
        log.error({ err: (err as Error).message, firstSeq: batch[0]?.seq }, 'indexer batch failed; retrying');
        await sleep(backoff);
        backoff = Math.min(5000, backoff * 2);
      }
    }
  })();
  follower.start();

  return {
    sql,
    lastSeq: () => store.highWater,
    stats: () => ({ ...stats, connects: follower.connects, connected: follower.connected }),
    waitFor(seq, timeoutMs = 10_000) {
      if (store.highWater >= seq) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const w = {
          seq,
          resolve: () => {
            clearTimeout(timer);
            waiters.delete(w);
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          reject(new Error(`indexer did not reach seq ${seq} within ${timeoutMs} ms (at ${store.highWater})`));
        }, timeoutMs);
        waiters.add(w);
      });
    },
    async close() {
      stopped = true;
      signals.wake?.();
      signals.drained?.();
      await follower.stop();
      // A batch in flight gets a moment to commit; against an unreachable database it would wait
      // for connect timeouts, so closing the connection cuts it short (it is retried on restart).
      await Promise.race([Promise.all([writer, lock]), sleep(2_000)]);
      await sql.end({ timeout: 1 });
    },
  };
}

/**
 * Whether the engine's history is still the one the mirror holds: the engine must have reached
 * `since`, and its event `since` must be the stored one (same kind and ts). The seq alone cannot
 * tell a restarted engine that has already passed the old high-water mark from the old one.
 */
async function engineHistoryChanged(engineUrl: string, token: string, sql: postgres.Sql, since: number): Promise<string | null> {
  if (since === 0) return null;
  const health = await getJson<{ maxSeq?: unknown }>(engineUrl, '/healthz');
  if (typeof health.maxSeq === 'number' && health.maxSeq < since) return `engine maxSeq ${health.maxSeq} is below the mirror's ${since}`;
  const [stored] = await sql<Array<{ kind: string; ts: string }>>`SELECT kind, ts FROM events WHERE seq = ${since}`;
  const live = await eventAt(engineUrl, token, since);
  if (!stored || !live) return null; // cannot compare (retention passed): trust the seq
  if (stored.kind !== live.kind || stored.ts !== new Date(live.ts).toISOString()) {
    return `event ${since} differs (mirror ${stored.kind} at ${stored.ts}, engine ${live.kind} at ${live.ts})`;
  }
  return null;
}

/** The engine's event `seq`, read from the admin stream; null when it is outside retention. */
async function eventAt(engineUrl: string, token: string, seq: number): Promise<EngineEvent | null> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 5_000);
  try {
    const res = await request(`${engineUrl}/v1/admin/events/stream?since=${seq - 1}`, {
      signal: abort.signal,
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    });
    if (res.statusCode === 410) {
      await res.body.dump();
      return null;
    }
    if (res.statusCode !== 200) throw new Error(`stream answered HTTP ${res.statusCode}`);
    let found: EngineEvent | null = null;
    const parser = createParser({ onEvent: (m) => void (found ??= JSON.parse(m.data) as EngineEvent) });
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
      if (found) break;
    }
    res.body.destroy();
    if (found === null || (found as EngineEvent).seq !== seq) throw new Error(`engine did not replay event ${seq}`);
    return found;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

async function getJson<T>(base: string, path: string): Promise<T> {
  const res = await request(base + path, { headersTimeout: 5_000, bodyTimeout: 5_000 });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${path} answered HTTP ${res.statusCode}`);
  return JSON.parse(text) as T;
}

export function toMarketRows(value: unknown): MarketRow[] {
  if (!Array.isArray(value)) throw new Error('GET /v1/markets: "markets" must be an array');
  return value.map((m: Record<string, unknown>) => ({
    symbol: String(m.symbol),
    sz_decimals: Number(m.szDecimals),
    min_notional: String(m.minNotional),
    max_leverage: Number(m.maxLeverage),
    status: typeof m.status === 'string' ? m.status : 'active',
  }));
}
