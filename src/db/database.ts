// The gateway's read-only handle on the indexer database.
//
// Construction does no I/O (postgres.js connects lazily), so app.ts can build it at import time
// in tests. Every read goes through `read()`, which
//   - answers the caller's "empty" value when no DATABASE_URL is configured (spec: silent degradation),
//   - turns driver failures into domain errors (src/db/errors.ts): DatabaseUnavailableError, or
//     SchemaBehindError for a v2 column the indexer has not migrated yet; the HTTP edge maps them to
//     503 `database_unavailable` / `schema_behind`,
//   - never hangs: the driver's connect and statement timeouts bound a silent peer and a slow query,
//     and an overall deadline (connect timeout + statement timeout + DEADLINE_MARGIN_MS) bounds what
//     they do not, e.g. a peer that accepts the connection and answers something that is not the
//     PostgreSQL protocol (an HTTP server, random bytes), on which the driver waits forever.
//     `schema()` and `ping()` (for /readyz) carry the same deadline.
//   - never keeps a connection whose peer stopped answering: a query the deadline abandoned on a
//     silent connection (a vanished host, a frozen proxy) would keep it for ever, and the pool would
//     queue every later query behind it. Each connection is watched (src/db/answer-watchdog.ts) and
//     destroyed once it owes an answer and has heard nothing for the statement timeout + 1 s; the
//     pool does not pipeline, so that check is exact; TCP keepalive probes idle connections.
//   - never lets driver text reach a client (it is logged instead).
import postgres from 'postgres';
import { DEFAULT_DB_ADDRESS_QUEUE, type Config } from '../config/env.js';
import { within } from '../deadline.js';
import { traced, tracingOn } from '../tracing/index.js';
import { watchedSocket } from './answer-watchdog.js';
import { DatabaseUnavailableError, isDataError, SchemaBehindError, type DataError } from './errors.js';
import { RowCache } from './json/row-cache.js';
import { DependencyState } from '../dependency-state.js';
import { systemClock, type Clock } from '../contracts/clock.js';
import { ReadShare } from './read-share.js';

export type Sql = postgres.Sql;
export type Queryable = postgres.Sql | postgres.TransactionSql;

export interface Logger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Columns that only exist from the indexer migrations 0014_tpsl_v2 and 0015_fired_limit. */
export const V2_COLUMNS: ReadonlyArray<{ table: string; column: string; migration: string }> = [
  ...['reduce_only', 'tp_trigger_price', 'tp_limit_price', 'tp_size', 'sl_trigger_price', 'sl_limit_price', 'sl_size'].map(
    (column) => ({ table: 'orders', column, migration: '0014_tpsl_v2' }),
  ),
  ...['size', 'limit_price', 'fired_size'].map((column) => ({ table: 'triggers', column, migration: '0014_tpsl_v2' })),
  { table: 'triggers', column: 'fired_limit', migration: '0015_fired_limit' },
];

export interface SchemaState {
  /** true when every v2 column exists. */
  current: boolean;
  /** Migrations whose columns are missing, e.g. ["0014_tpsl_v2", "0015_fired_limit"]. */
  missing: string[];
  checkedAt: number;
}

const CONNECTION_ERRORS = new Set([
  'DEADLINE_EXCEEDED',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
]);

/** SQLSTATE classes that mean "the server is not usable right now". */
function isUnavailable(code: string | undefined): boolean {
  if (!code) return false;
  return (
    CONNECTION_ERRORS.has(code) ||
    code.startsWith('08') || // connection exception
    code.startsWith('57') || // operator intervention: admin shutdown, query canceled (statement timeout)
    code.startsWith('53') // insufficient resources: too many connections
  );
}

/** While the database is down, how often it is pinged to notice (and log) its return. */
const RECHECK_MS = 3_000;

/** Slack added to connect timeout + statement timeout for the overall deadline of one read. */
export const DEADLINE_MARGIN_MS = 1_000;
/** Connections of the snapshot pool (readSnapshot: the account seed). */
export const SNAPSHOT_POOL_MAX = 2;

/** TCP keepalive: idle seconds before the first probe (the probe interval and count are the OS's). */
export const KEEPALIVE_IDLE_S = 10;

/**
 * The answer watchdog reads the protocol's plaintext on one TCP socket: not with TLS (the driver
 * wraps its socket itself) nor with several hosts (the driver's failover picks the host); those
 * keep the driver's own socket with keepalive.
 */
function watchable(url: string): boolean {
  const u = new URL(url);
  const ssl = u.searchParams.get('sslmode') ?? u.searchParams.get('ssl') ?? process.env.PGSSLMODE;
  const tls = ssl !== undefined && ssl !== null && ssl !== 'disable' && ssl !== 'false';
  const authority = url.split('//')[1]?.split(/[/?]/)[0] ?? '';
  return !tls && !authority.includes(',');
}

/** What a deadline rejects with: an unavailable database (translated to 503 database_unavailable). */
export class DeadlineError extends Error {
  readonly code = 'DEADLINE_EXCEEDED';
  constructor(readonly ms: number) {
    super(`the database gave no usable answer within ${ms} ms`);
  }
}

export class Database {
  readonly sql: Sql | null;
  /** The pool of snapshot reads (readSnapshot). */
  private readonly snapshotSql: Sql | null;
  private schemaState: SchemaState | null = null;
  private schemaCheck: Promise<SchemaState> | null = null;
  /** Overall bound of one read, schema check or ping, in ms. */
  readonly deadlineMs: number;
  /** List rows kept as written JSON by version (json/row-cache.ts); none unless `listRowCacheBytes` is set. */
  readonly rows: RowCache;
  /** One warning when the database goes, one when it comes back (src/dependency-state.ts). */
  private readonly state: DependencyState;
  /** While the database is down: a ping every few seconds, so its return is logged without traffic. */
  private recheck: NodeJS.Timeout | null = null;
  /** Whose read takes the next connection of each pool (read-share.ts). */
  readonly share: ReadShare;
  private readonly snapshotShare: ReadShare;

  constructor(
    config: Pick<Config, 'databaseUrl' | 'dbPoolMax' | 'dbConnectTimeoutS' | 'dbStatementTimeoutMs'> & Partial<Pick<Config, 'listRowCacheBytes' | 'dbAddressInFlight' | 'dbAddressQueue'>>,
    private readonly log: Logger,
    /** How long a schema check is trusted before it is made again. */
    private readonly schemaTtlMs = 10_000,
    private readonly clock: Clock = systemClock,
  ) {
    // A read may run up to three statements one after another (a page, the rows sharing its last
    // key, the schema check), each bounded by the server's statement timeout.
    this.deadlineMs = config.dbConnectTimeoutS * 1000 + 3 * config.dbStatementTimeoutMs + DEADLINE_MARGIN_MS;
    this.rows = new RowCache(config.listRowCacheBytes ?? 0);
    this.state = new DependencyState('database', log, clock);
    // A read waits for its turn at most one deadline; an address's reads run DB_ADDRESS_IN_FLIGHT at
    // once (0: as many as the pool), DB_ADDRESS_QUEUE wait.
    const shareOf = (capacity: number) =>
      new ReadShare({
        capacity,
        addressInFlight: config.dbAddressInFlight || capacity,
        addressQueue: config.dbAddressQueue ?? DEFAULT_DB_ADDRESS_QUEUE,
        waitMs: this.deadlineMs,
        clock,
      });
    this.share = shareOf(config.dbPoolMax);
    this.snapshotShare = shareOf(SNAPSHOT_POOL_MAX);
    const options = (max: number, transport: object) => ({
          max,
          connect_timeout: config.dbConnectTimeoutS,
          idle_timeout: 30,
          max_lifetime: 60 * 30,
          prepare: true,
          // Idle connections to a host that vanished are probed after this many seconds idle.
          keep_alive: KEEPALIVE_IDLE_S,
          ...transport,
          // No array-type lookup on connect: the reads use no custom array types, and that lookup's
          // rejection goes unhandled when a peer fakes a handshake and then breaks the connection.
          fetch_types: false,
          onnotice: () => {},
          // UTC and ISO dates: the form the list reads' JSON writer turns into wire times without a Date.
          connection: {
            statement_timeout: config.dbStatementTimeoutMs,
            application_name: 'trading-gateway',
            TimeZone: 'UTC',
            DateStyle: 'ISO, MDY',
          },
          transform: { column: { from: postgres.toCamel } },
          types: {
            // Seqs, nonces and counts are bigint in the schema but below 2^53: numbers on the wire.
            int8: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
            // Times are ISO 8601 UTC strings with milliseconds on the wire.
            tstz: {
              to: 1184,
              from: [1184, 1114],
              serialize: (x: string) => x,
              parse: (x: string) => new Date(x).toISOString(),
            },
          },
        });
    this.sql = config.databaseUrl ? postgres(config.databaseUrl, options(config.dbPoolMax, this.transport(config))) : null;
    // Snapshot reads (one REPEATABLE READ transaction of several statements) get a pool of their own:
    // postgres.js's sql.begin marks its connection as the transaction's only where the pool may
    // pipeline, and the main pool may not (max_pipeline 0, for the answer watchdog); its reserve()
    // on an empty pool never resolves with fetch_types off. A transaction sends its statements one
    // after another, so one statement in flight per connection holds here too (max_pipeline 1).
    this.snapshotSql = config.databaseUrl
      ? postgres(config.databaseUrl, options(SNAPSHOT_POOL_MAX, { ...this.transport(config), ...(watchable(config.databaseUrl) ? { max_pipeline: 1 } : {}) }))
      : null;
  }

  /**
   * Driver options postgres.js supports but does not type: no pipelining (one query at a time per
   * connection, so the answer watchdog knows what a connection owes) and the watched socket.
   */
  private transport(config: Pick<Config, 'databaseUrl' | 'dbStatementTimeoutMs'>): object {
    if (!config.databaseUrl || !watchable(config.databaseUrl)) return {};
    return {
      max_pipeline: 0,
      socket: watchedSocket({
        answerTimeoutMs: config.dbStatementTimeoutMs + DEADLINE_MARGIN_MS,
        clock: this.clock,
        onDead: (silentMs) => this.log.warn({ silentMs }, 'database connection silent while owing an answer: closed'),
      }),
    };
  }

  get configured(): boolean {
    return this.sql !== null;
  }

  /**
   * Runs a read. `empty` is what the route answers without a database (an empty list, a zero
   * balance, …). `needsV2` marks reads that name the take-profit/stop-loss v2 columns.
   */
  async read<T>(empty: T, fn: (sql: Sql) => Promise<T>, options: { needsV2?: boolean } = {}): Promise<T> {
    const sql = this.sql;
    if (!sql) return empty;
    if (!tracingOn()) return this.readNow(this.share, sql, fn, options);
    const name = statementName(fn);
    return traced(`db ${name}`, () => this.readNow(this.share, sql, fn, options), { childOnly: true, attributes: { 'db.system.name': 'postgresql', 'db.query.summary': name } });
  }

  /** Reads started and not yet settled, for the `bff_db_reads_in_flight` gauge. */
  readsInFlight = 0;

  private async readNow<T>(share: ReadShare, sql: Sql, fn: (sql: Sql) => Promise<T>, options: { needsV2?: boolean }): Promise<T> {
    // The read's turn first (a refusal or a wait past the deadline is not the database failing);
    // the deadline then bounds what the read itself takes, as before.
    const release = await share.turn();
    this.readsInFlight++;
    const askedAt = this.clock.now();
    try {
      return await this.withDeadline(async () => {
        if (options.needsV2) {
          const schema = await this.schema();
          if (!schema.current) throw schemaBehind(schema.missing);
        }
        return fn(sql);
      }).then((answer) => {
        this.answered(askedAt);
        return answer;
      });
    } catch (err) {
      throw this.translate(err, askedAt);
    } finally {
      this.readsInFlight--;
      release();
    }
  }

  /**
   * Runs `work` but settles no later than `deadlineMs`: past it, rejects with DeadlineError. The
   * timer is cleared as soon as either side settles, so no timer outlives the call. The abandoned
   * query is left to the driver (its connection fails or recovers by itself); a late rejection of it
   * is handled by the race and goes nowhere.
   */
  async withDeadline<T>(work: () => Promise<T>, ms = this.deadlineMs, onTimeout?: () => void): Promise<T> {
    return within(work(), ms, () => {
      onTimeout?.();
      return new DeadlineError(ms);
    });
  }

  /**
   * A read whose statements all see one snapshot (REPEATABLE READ READ ONLY), on the snapshot pool;
   * same deadline, error mapping and `empty` answer as `read`.
   */
  async readSnapshot<T>(empty: T, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const sql = this.snapshotSql;
    if (!sql) return empty;
    return this.readNow(this.snapshotShare, sql, (pool) => pool.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', (tx) => fn(tx)) as Promise<T>, {});
  }

  /**
   * Runs one query function that needs a database (no "empty" answer without one): the session
   * lookup, the event store, the candle rebuild. Same deadline and error mapping as `read`; without
   * DATABASE_URL it raises DatabaseUnavailableError.
   */
  async run<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    if (!this.sql) throw new DatabaseUnavailableError('no database is configured (DATABASE_URL)');
    return this.read(undefined as T, fn);
  }

  /** Maps a driver error to the domain error the edge turns into a response; logs the original. */
  translate(err: unknown, askedAt?: number): DataError {
    if (isDataError(err)) return err;
    const code = (err as { code?: string } | null)?.code;
    if (code === '42703' || code === '42P01') {
      this.schemaState = null; // the schema changed under us: check again next time
      this.log.error({ err }, 'indexer schema is missing a column or table');
      return schemaBehind(['0014_tpsl_v2', '0015_fired_limit']);
    }
    if (isUnavailable(code)) {
      this.log.warn({ code, msg: (err as Error).message }, 'database unavailable');
      this.unreachable(code ?? 'error', askedAt);
      return new DatabaseUnavailableError();
    }
    this.log.error({ err }, 'database query failed');
    return new DatabaseUnavailableError('the indexer database could not answer this read');
  }

  /** Which v2 migrations are missing, from the columns that actually exist (cached for schemaTtlMs). */
  async schema(): Promise<SchemaState> {
    const sql = this.sql;
    if (!sql) return { current: false, missing: [], checkedAt: this.clock.now() };
    const cached = this.schemaState;
    if (cached && this.clock.now() - cached.checkedAt < this.schemaTtlMs) return cached;
    this.schemaCheck ??= (async () => {
      try {
        const query = sql<{ tableName: string; columnName: string }[]>`
          SELECT table_name, column_name FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name IN ('orders', 'triggers')`;
        // Past the deadline the query is cancelled, not left queued in the driver.
        const rows = await this.withDeadline(() => query, undefined, () => void query.cancel());
        const present = new Set(rows.map((r) => `${r.tableName}.${r.columnName}`));
        const missing = [...new Set(V2_COLUMNS.filter((c) => !present.has(`${c.table}.${c.column}`)).map((c) => c.migration))];
        const state = { current: missing.length === 0, missing, checkedAt: this.clock.now() };
        this.schemaState = state;
        return state;
      } catch (err) {
        throw this.translate(err);
      } finally {
        this.schemaCheck = null;
      }
    })();
    return this.schemaCheck;
  }

  /** Reachability for /readyz: never throws, bounded by the connect timeout and the overall deadline. */
  async ping(): Promise<{ ok: boolean; latencyMs: number; error?: string }> {
    const sql = this.sql;
    const started = performance.now();
    const askedAt = this.clock.now();
    if (!sql) return { ok: false, latencyMs: 0, error: 'DATABASE_URL is not set' };
    try {
      const query = sql`SELECT 1`;
      await this.withDeadline(() => query, undefined, () => void query.cancel());
      this.answered(askedAt);
      return { ok: true, latencyMs: Math.round(performance.now() - started) };
    } catch (err) {
      const code = (err as { code?: string }).code;
      this.unreachable(code ?? 'error', askedAt);
      return { ok: false, latencyMs: Math.round(performance.now() - started), error: `unreachable (${code ?? 'error'})` };
    }
  }

  /** The first failure of an outage is logged, and pings begin so its end is logged too (no traffic needed). */
  private unreachable(reason: string, askedAt?: number): void {
    this.state.failed(reason, askedAt);
    if (this.recheck || !this.sql) return;
    this.recheck = setInterval(() => void this.ping(), RECHECK_MS);
    this.recheck.unref();
  }

  /** `askedAt`: when the answered query was sent (an answer to one sent before the outage does not end it). */
  private answered(askedAt: number): void {
    if (!this.state.down) return;
    this.state.answered(askedAt);
    if (this.state.down) return;
    if (this.recheck) clearInterval(this.recheck);
    this.recheck = null;
  }

  async close(): Promise<void> {
    if (this.recheck) clearInterval(this.recheck);
    this.recheck = null;
    await Promise.all([this.sql?.end({ timeout: 2 }), this.snapshotSql?.end({ timeout: 2 })]);
  }
}

export function schemaBehind(missing: string[]): SchemaBehindError {
  return new SchemaBehindError(missing);
}

/**
 * Names by arrow source: a read site's arrow is a new closure per call but always the same source
 * text, so its name is worked out once per site (a few dozen sites: the map stays that small).
 */
const namesBySource = new Map<string, string>();

/**
 * The name of the query a read runs, for its span: every read passes an arrow that calls one query
 * function of src/db/queries/ (`(sql) => listFills(sql, …)`), so the first such call in its source
 * names the statement without any value. Only computed when traces are on.
 */
export function statementName(fn: (sql: Sql) => unknown): string {
  const source = fn.toString();
  let name = namesBySource.get(source);
  if (name === undefined) {
    name = nameFromSource(source);
    // Bounded all the same: an arrow built from `new Function` text per call must not grow it.
    if (namesBySource.size < 1024) namesBySource.set(source, name);
  }
  return name;
}

function nameFromSource(source: string): string {
  const param = /^\s*(?:async\s*)?\(?\s*([A-Za-z_$][\w$]*)/.exec(source)?.[1];
  if (param === undefined) return 'query';
  // `listFills(sql` as written, or `(0, module.listFills)(sql` once a bundler rewrote the import.
  const calls = source.matchAll(new RegExp(`([A-Za-z_$][\\w$]*)\\)?\\(\\s*${param.replace(/\$/g, '\\$')}\\b`, 'g'));
  for (const [, name] of calls) if (name !== 'async') return name!;
  return 'query';
}
