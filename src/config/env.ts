// Configuration comes only from environment variables. Every variable is parsed and validated
// once at start; the first bad one throws a ConfigError whose message is the single line that
// main.ts prints before exiting non-zero. The defaults are the ones given below; SETTINGS (at the
// end) says what each variable means, and docs/configuration.md's table is generated from both.
import { isIP } from 'node:net';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

/** Reads of one client address waiting for their turn of the read pool, unless DB_ADDRESS_QUEUE says otherwise. */
export const DEFAULT_DB_ADDRESS_QUEUE = 256;

export interface Config {
  /** NODE_ENV, one of the three known values (a typo such as `prod` stops the start). */
  nodeEnv: NodeEnv;
  port: number;
  host: string;
  logLevel: string;
  /** null: no database configured; reads answer as for an empty database and /readyz is degraded. */
  databaseUrl: string | null;
  dbPoolMax: number;
  /** Reads of one client address holding a connection's turn at once (db/read-share.ts); 0: as many as the pool. */
  dbAddressInFlight: number;
  /** Reads of one client address waiting for their turn; past it refused 429. */
  dbAddressQueue: number;
  /** Identical concurrent list reads share one database read that started after they arrived (src/http/reads/shared-pages.ts). */
  listSharedReads: boolean;
  listRowCacheBytes: number;
  dbConnectTimeoutS: number;
  dbStatementTimeoutMs: number;
  engineBaseUrl: string;
  /** null: the SSE bridge does not start and stream clients receive nothing. */
  engineAdminToken: string | null;
  engineTimeoutMs: number;
  /** CLIENT_ORDER_CLAIM_MARGIN_MS: a client order id claim outlives its place's signature window by this much (docs/trading.md). */
  clientOrderClaimMarginMs: number;
  engineConnections: number;
  /** Engine calls of one client address at the engine at once (the fair share, src/fair-share.ts). */
  engineAddressInFlight: number;
  /** Engine calls of one client address waiting for its share; past it refused 429. */
  engineAddressQueue: number;
  /** Deflate connections of one address closed for a message inflating past the bound, per rate-limit window, before its deflate upgrades are refused. */
  wsDeflateOversizePerIp: number;
  /** Deflate stream connections of one client address open at once; past it `compress=deflate` upgrades are refused 429 (plain ones accepted). */
  wsDeflateConnectionsPerIp: number;
  proofPagesPerIp: number;
  /** Proofs of user batches built as the chain records them, ahead of any request (ADR 0382). */
  proofBuildAhead: boolean;
  /** Bytes of verified proof answers kept (ADR 0063, ADR 0382). */
  proofCacheBytes: number;
  /** Trading requests of one client address in progress at once; past it refused 429 before the body is read. */
  tradingAddressInProgress: number;
  /** Identical concurrent order book reads share one engine call (src/engine/shared-read.ts). */
  orderbookSharedReads: boolean;
  wsOrderbookPollMs: number;
  wsOrderbookDepth: number;
  /** How long a book kept from events waits for the mirror to reach the stream before showing the engine's levels meanwhile. */
  bookMirrorWaitMs: number;
  wsMaxConnections: number;
  /** The slow-consumer bound of one /v1/stream connection (unsent bytes). */
  wsClientBufferBytes: number;
  wsPingMs: number;
  /** What one stream client may send: largest message, sustained messages per second, burst. */
  wsClientMessageMaxBytes: number;
  wsClientMessagesPerS: number;
  wsClientMessageBurst: number;
  /** Messages a second all stream connections of one client address may send together (0: no bound). */
  wsAddressMessagesPerS: number;
  /** permessage-deflate for connections that ask (`compress=deflate`); false: never negotiated. */
  wsDeflate: boolean;
  /** Frames smaller than this are sent uncompressed on a deflate connection. */
  wsDeflateThresholdBytes: number;
  wsHistorySize: number;
  /** A complete account kept for REST reads alone is evicted this long after its last read (docs/account.md). */
  accountIdleMs: number;
  /** Most complete accounts kept for REST reads alone (stream connections' parties not counted). */
  accountReadPartiesMax: number;
  sseIdleMs: number;
  /** Longest unfinished SSE line or event the engine bridge holds before it drops the connection. */
  sseMaxEventBytes: number;
  authDisabled: boolean;
  faucetEnabled: boolean;
  faucetAmount: string;
  faucetCooldownS: number;
  faucetCeiling: string;
  corsOrigins: string[];
  vaultOperator: string | null;
  /** Requests per window of one verified party on the trading and faucet routes. */
  rateLimitMax: number;
  /** Requests per window of one client IP on the same routes (every request, signed or not). */
  rateLimitIpMax: number;
  rateLimitWindowMs: number;
  /** Unexpired signatures the in-process replay memory holds before it refuses new ones. */
  replayMemoryMax: number;
  /** How far a signature's timestamp may be from the gateway's clock (ms); at most the engine's 30 s. */
  signatureWindowMs: number;
  /** Node HTTP server: the whole header block must arrive within this time. */
  httpHeadersTimeoutMs: number;
  /** Node HTTP server: the whole request (headers and body) must arrive within this time. */
  httpRequestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this time. */
  httpKeepAliveTimeoutMs: number;
  /** A socket on which nothing moves for this long is closed (Fastify connectionTimeout). */
  httpIdleTimeoutMs: number;
  /** Concurrent TCP connections per client address (0: no cap); streams count too. */
  httpMaxConnectionsPerIp: number;
  /** Concurrent /v1/stream connections per client (request.ip, IPv6 by /64; 0: no cap). */
  wsMaxConnectionsPerIp: number;
  sessionLookupsPerIp: number;
  snapshotReadsPerIp: number;
  /**
   * File descriptors under the process's open-file limit that stream connections never take
   * (src/http/connection-limits.ts connectionBudget); null: derived from the limit (`auto`).
   */
  fdHeadroom: number | null;
  /** Fastify `trustProxy`: false, a hop count, or the proxies' addresses/CIDRs (docs/configuration.md). */
  trustProxy: false | number | string[];
  /** Shared state across replicas (rate limits, replay memory, faucet lock); null: per process. */
  redisUrl: string | null;
  /** Key prefix of everything the gateway keeps in Redis. */
  redisPrefix: string;
  /** Redis Sentinel: the sentinels to ask for the primary (null: REDIS_URL names the one Redis). */
  redisSentinels: Array<{ host: string; port: number }> | null;
  /** The primary's name the sentinels monitor. */
  redisSentinelName: string;
  /** Password of the Redis data nodes behind Sentinel, and of the sentinels themselves (null: none). */
  redisPassword: string | null;
  redisSentinelPassword: string | null;
  /** Replicas that must acknowledge a replay-memory or faucet key before it counts (Redis WAIT); 0: no wait. */
  redisWaitReplicas: number;
  /** One engine stream for the fleet through JetStream; null: this process reads the engine's SSE. */
  natsUrl: string | null;
  natsStream: string;
  natsSubject: string;
  /** JetStream retention (relay creates/updates the stream): max age and max bytes. */
  natsMaxAgeS: number;
  natsMaxBytes: number;
  /** Relay: how many NATS servers hold a copy of the stream it creates (JetStream `num_replicas`). */
  natsStreamReplicas: number;
  /** A JetStream replica further behind the engine's head than this many seconds is degraded (/readyz, clients told). */
  streamBehindMaxS: number;
  /** OpenTelemetry traces on (the standard OTEL_* variables name an exporter or an endpoint); off by default. */
  tracing: boolean;
}

type Env = Record<string, string | undefined>;

export const NODE_ENVS = ['development', 'production', 'test'] as const;
export type NodeEnv = (typeof NODE_ENVS)[number];

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `must be an integer, got "${value}"`);
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${value}"`);
}

function httpUrl(env: Env, name: string, fallback: string): string {
  const value = raw(env, name) ?? fallback;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an http(s) URL, got "${value}"`);
  }
  return value.replace(/\/+$/, '');
}

function postgresUrl(env: Env, name: string): string | null {
  const value = raw(env, name);
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be a postgres:// URL, got "${redact(value)}"`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(name, `must be a postgres:// URL, got "${redact(value)}"`);
  }
  return value;
}

/** Never echo a password into logs. */
function redact(value: string): string {
  return value.replace(/\/\/([^:/@]+):([^@]+)@/, '//$1:***@');
}

const DECIMAL = /^\d{1,28}(\.\d{1,10})?$/;

function decimal(env: Env, name: string, fallback: string): string {
  const value = raw(env, name) ?? fallback;
  if (!DECIMAL.test(value)) {
    throw new ConfigError(name, `must be a non-negative decimal with at most 10 decimals, got "${value}"`);
  }
  return value;
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  return value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const value = raw(env, name) ?? fallback;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`);
  }
  return value as T;
}

/** An integer, or null for `auto` (and unset): a value the gateway derives at start. */
function intOrAuto(env: Env, name: string, min: number, max: number): number | null {
  const value = raw(env, name);
  if (value === undefined || value === 'auto') return null;
  return int(env, name, 0, min, max);
}

/** TRUST_PROXY: unset/false → trust nothing; an integer → that many proxy hops; else a list of addresses/CIDRs. */
function trustProxy(env: Env, name: string): false | number | string[] {
  const value = raw(env, name);
  if (value === undefined || value === 'false' || value === '0') return false;
  if (/^\d+$/.test(value)) return int(env, name, 0, 0, 16);
  const entries = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const e of entries) {
    const [addr, bits, extra] = e.split('/');
    const family = isIP(addr ?? '');
    const maxBits = family === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !bitsOk || extra !== undefined) {
      throw new ConfigError(name, `must be a hop count or a comma-separated list of proxy addresses/CIDRs, got "${e}"`);
    }
  }
  return entries;
}

function schemeUrl(env: Env, name: string, schemes: string[]): string | null {
  const value = raw(env, name);
  if (value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be a ${schemes.join(' or ')} URL, got "${redact(value)}"`);
  }
  if (!schemes.includes(url.protocol.replace(/:$/, ''))) {
    throw new ConfigError(name, `must be a ${schemes.join(' or ')} URL, got "${redact(value)}"`);
  }
  return value;
}

/**
 * A comma-separated list of server URLs (a cluster's seeds), each of the given schemes; returned as
 * the same list without blanks around the commas. The client learns the rest of the cluster from
 * whichever seed answers, so one dead seed never stops a start.
 */
function seedUrls(env: Env, name: string, schemes: string[]): string | null {
  const value = raw(env, name);
  if (value === undefined) return null;
  const parts = value.split(',').map((p) => p.trim());
  if (parts.some((p) => p === '')) throw new ConfigError(name, `must be a comma-separated list of ${schemes.join(' or ')} URLs, got an empty entry in "${redact(value)}"`);
  for (const part of parts) schemeUrl({ [name]: part }, name, schemes);
  return parts.join(',');
}

/** REDIS_SENTINELS: `host:port,host:port,…` (IPv6 in brackets: `[::1]:26379`). */
function hostPorts(env: Env, name: string): Array<{ host: string; port: number }> | null {
  const value = raw(env, name);
  if (value === undefined) return null;
  const entries = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (entries.length === 0) throw new ConfigError(name, `must be a comma-separated list of host:port, got "${value}"`);
  return entries.map((e) => {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(e);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) throw new ConfigError(name, `must be a comma-separated list of host:port, got "${e}"`);
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
  });
}

function token(env: Env, name: string, fallback: string, pattern: RegExp): string {
  const value = raw(env, name) ?? fallback;
  if (!pattern.test(value)) throw new ConfigError(name, `must match ${pattern}, got "${value}"`);
  return value;
}

const OTEL_EXPORTERS = ['otlp', 'console', 'zipkin', 'none'] as const;
const OTEL_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
const OTEL_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;

/**
 * Whether traces are on, from the standard OpenTelemetry variables (the SDK reads them itself when
 * it starts; they are checked here so a typo fails the start with one line, like every setting).
 * Off unless OTEL_TRACES_EXPORTER names an exporter other than `none` or an OTLP endpoint is set;
 * OTEL_SDK_DISABLED=true turns them off whatever else says.
 */
function tracingOn(env: Env): boolean {
  const disabled = bool(env, 'OTEL_SDK_DISABLED', false);
  const exporters = list(env, 'OTEL_TRACES_EXPORTER', []);
  for (const e of exporters) {
    if (!(OTEL_EXPORTERS as readonly string[]).includes(e)) {
      throw new ConfigError('OTEL_TRACES_EXPORTER', `must be a comma-separated list of ${OTEL_EXPORTERS.join(', ')}, got "${e}"`);
    }
  }
  const endpoints = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'].filter((name) => raw(env, name) !== undefined);
  for (const name of endpoints) httpUrl(env, name, '');
  for (const name of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']) oneOf(env, name, 'http/protobuf', OTEL_PROTOCOLS);
  const sampler = oneOf(env, 'OTEL_TRACES_SAMPLER', 'parentbased_always_on', OTEL_SAMPLERS);
  const arg = raw(env, 'OTEL_TRACES_SAMPLER_ARG');
  if (arg !== undefined && sampler.endsWith('traceidratio') && !(/^(0(\.\d+)?|1(\.0+)?)$/.test(arg))) {
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a ratio from 0 to 1, got "${arg}"`);
  }
  if (disabled) return false;
  if (exporters.length > 0) return exporters.some((e) => e !== 'none');
  return endpoints.length > 0;
}

export function loadConfig(env: Env = process.env): Config {
  // A misspelt NODE_ENV (`prod`) would silently give the development defaults (CORS `*`, loopback).
  const nodeEnv = oneOf(env, 'NODE_ENV', 'development', NODE_ENVS);
  const production = nodeEnv === 'production';
  const rateLimitMax = int(env, 'RATE_LIMIT_MAX', 600, 1, 10_000_000);
  const headersTimeout = int(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeout = int(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  // Node refuses to start a server whose header deadline is longer than its request deadline.
  if (headersTimeout > requestTimeout) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS', `must not exceed HTTP_REQUEST_TIMEOUT_MS (${requestTimeout}), got "${headersTimeout}"`);
  }
  // A socket idle while its request waits on the engine must not be closed under it.
  const engineTimeout = int(env, 'ENGINE_TIMEOUT_MS', 5000, 50, 120_000);
  const idleTimeout = int(env, 'HTTP_IDLE_TIMEOUT_MS', 60_000, 100, 3_600_000);
  if (idleTimeout <= engineTimeout) {
    throw new ConfigError('HTTP_IDLE_TIMEOUT_MS', `must exceed ENGINE_TIMEOUT_MS (${engineTimeout}), got "${idleTimeout}"`);
  }
  const redisSentinels = hostPorts(env, 'REDIS_SENTINELS');
  // One Redis or the sentinels that name it, not both: which one would the gateway write to?
  if (redisSentinels && raw(env, 'REDIS_URL') !== undefined) {
    throw new ConfigError('REDIS_SENTINELS', 'and REDIS_URL are exclusive: set REDIS_SENTINELS (and REDIS_SENTINEL_NAME) for Sentinel, REDIS_URL for one Redis');
  }
  return {
    nodeEnv,
    port: int(env, 'PORT', 4000, 0, 65535),
    host: raw(env, 'HOST') ?? (production ? '0.0.0.0' : '127.0.0.1'),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    databaseUrl: postgresUrl(env, 'DATABASE_URL'),
    dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 200),
    dbAddressInFlight: int(env, 'DB_ADDRESS_IN_FLIGHT', 0, 0, 200),
    dbAddressQueue: int(env, 'DB_ADDRESS_QUEUE', DEFAULT_DB_ADDRESS_QUEUE, 0, 1_000_000),
    listSharedReads: bool(env, 'LIST_SHARED_READS', true),
    listRowCacheBytes: int(env, 'LIST_ROW_CACHE_BYTES', 33_554_432, 0, 4_294_967_296),
    dbConnectTimeoutS: int(env, 'DB_CONNECT_TIMEOUT_S', 3, 1, 60),
    dbStatementTimeoutMs: int(env, 'DB_STATEMENT_TIMEOUT_MS', 5000, 100, 600_000),
    engineBaseUrl: httpUrl(env, 'ENGINE_BASE_URL', 'http://127.0.0.1:8080'),
    engineAdminToken: raw(env, 'ENGINE_ADMIN_TOKEN') ?? null,
    engineTimeoutMs: int(env, 'ENGINE_TIMEOUT_MS', 5000, 50, 120_000),
    clientOrderClaimMarginMs: int(env, 'CLIENT_ORDER_CLAIM_MARGIN_MS', 15_000, 100, 600_000),
    engineConnections: int(env, 'ENGINE_CONNECTIONS', 64, 1, 1024),
    engineAddressInFlight: int(env, 'ENGINE_ADDRESS_IN_FLIGHT', 16, 1, 1024),
    engineAddressQueue: int(env, 'ENGINE_ADDRESS_QUEUE', 256, 0, 1_000_000),
    tradingAddressInProgress: int(env, 'TRADING_ADDRESS_IN_PROGRESS', 32, 0, 1_000_000),
    wsDeflateOversizePerIp: int(env, 'WS_DEFLATE_OVERSIZE_PER_IP', 3, 0, 1_000_000),
    wsDeflateConnectionsPerIp: int(env, 'WS_DEFLATE_CONNECTIONS_PER_IP', 8, 0, 1_000_000),
    proofPagesPerIp: int(env, 'PROOF_PAGES_PER_IP', 8, 1, 1_000),
    proofBuildAhead: bool(env, 'PROOF_BUILD_AHEAD', true),
    proofCacheBytes: int(env, 'PROOF_CACHE_BYTES', 268_435_456, 0, 68_719_476_736),
    orderbookSharedReads: bool(env, 'ORDERBOOK_SHARED_READS', true),
    wsOrderbookPollMs: int(env, 'WS_ORDERBOOK_POLL_MS', 500, 50, 3_600_000),
    wsOrderbookDepth: int(env, 'WS_ORDERBOOK_DEPTH', 20, 1, 100),
    bookMirrorWaitMs: int(env, 'BOOK_MIRROR_WAIT_MS', 10_000, 0, 3_600_000),
    wsMaxConnections: int(env, 'WS_MAX_CONNECTIONS', 20_000, 1, 1_000_000),
    wsClientBufferBytes: int(env, 'WS_CLIENT_BUFFER_BYTES', 1_048_576, 1024, 1_073_741_824),
    wsPingMs: int(env, 'WS_PING_MS', 30_000, 100, 3_600_000),
    wsClientMessageMaxBytes: int(env, 'WS_CLIENT_MESSAGE_MAX_BYTES', 65_536, 128, 1_048_576),
    wsClientMessagesPerS: int(env, 'WS_CLIENT_MESSAGES_PER_S', 20, 1, 100_000),
    wsClientMessageBurst: int(env, 'WS_CLIENT_MESSAGE_BURST', 40, 1, 1_000_000),
    wsAddressMessagesPerS: int(env, 'WS_ADDRESS_MESSAGES_PER_S', 200, 0, 1_000_000),
    wsDeflate: bool(env, 'WS_DEFLATE', true),
    wsDeflateThresholdBytes: int(env, 'WS_DEFLATE_THRESHOLD_BYTES', 128, 0, 1_048_576),
    wsHistorySize: int(env, 'WS_HISTORY_SIZE', 10_000, 0, 10_000_000),
    accountIdleMs: int(env, 'ACCOUNT_IDLE_MS', 600_000, 100, 86_400_000),
    accountReadPartiesMax: int(env, 'ACCOUNT_READ_PARTIES_MAX', 10_000, 1, 10_000_000),
    sseIdleMs: int(env, 'SSE_IDLE_MS', 45_000, 100, 3_600_000),
    sseMaxEventBytes: int(env, 'SSE_MAX_EVENT_BYTES', 1_048_576, 1024, 1_073_741_824),
    authDisabled: bool(env, 'AUTH_DISABLED', false),
    faucetEnabled: bool(env, 'FAUCET_ENABLED', false),
    faucetAmount: decimal(env, 'FAUCET_AMOUNT', '1000'),
    faucetCooldownS: int(env, 'FAUCET_COOLDOWN_S', 3600, 0, 31_536_000),
    faucetCeiling: decimal(env, 'FAUCET_CEILING', '10000'),
    corsOrigins: list(env, 'CORS_ORIGINS', production ? [] : ['*']),
    vaultOperator: raw(env, 'VAULT_OPERATOR') ?? null,
    rateLimitMax,
    // An IP carries two parties' worth by default (a few users behind one NAT address).
    rateLimitIpMax: int(env, 'RATE_LIMIT_IP_MAX', Math.min(2 * rateLimitMax, 10_000_000), 1, 10_000_000),
    rateLimitWindowMs: int(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 100, 86_400_000),
    replayMemoryMax: int(env, 'REPLAY_MEMORY_MAX', 1_000_000, 1, 100_000_000),
    signatureWindowMs: int(env, 'SIGNATURE_WINDOW_MS', 30_000, 1_000, 30_000),
    httpHeadersTimeoutMs: int(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    httpRequestTimeoutMs: int(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    httpKeepAliveTimeoutMs: int(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 600_000),
    httpIdleTimeoutMs: int(env, 'HTTP_IDLE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    httpMaxConnectionsPerIp: int(env, 'HTTP_MAX_CONNECTIONS_PER_IP', 512, 0, 1_000_000),
    wsMaxConnectionsPerIp: int(env, 'WS_MAX_CONNECTIONS_PER_IP', 100, 0, 1_000_000),
    sessionLookupsPerIp: int(env, 'SESSION_LOOKUPS_PER_IP', 120, 1, 10_000_000),
    snapshotReadsPerIp: int(env, 'SNAPSHOT_READS_PER_IP', 1_200, 1, 10_000_000),
    fdHeadroom: intOrAuto(env, 'FD_HEADROOM', 0, 1_000_000),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    redisUrl: schemeUrl(env, 'REDIS_URL', ['redis', 'rediss']),
    redisPrefix: token(env, 'REDIS_PREFIX', 'gw:', /^[A-Za-z0-9:_.-]{1,64}$/),
    redisSentinels,
    redisSentinelName: token(env, 'REDIS_SENTINEL_NAME', 'gateway', /^[A-Za-z0-9_.-]{1,64}$/),
    redisPassword: raw(env, 'REDIS_PASSWORD') ?? null,
    redisSentinelPassword: raw(env, 'REDIS_SENTINEL_PASSWORD') ?? null,
    redisWaitReplicas: int(env, 'REDIS_WAIT_REPLICAS', redisSentinels ? 1 : 0, 0, 10),
    natsUrl: seedUrls(env, 'NATS_URL', ['nats', 'tls']),
    natsStream: token(env, 'NATS_STREAM', 'ENGINE_EVENTS', /^[A-Za-z0-9_-]{1,64}$/),
    natsSubject: token(env, 'NATS_SUBJECT', 'engine.events', /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/),
    natsMaxAgeS: int(env, 'NATS_MAX_AGE_S', 172_800, 60, 31_536_000),
    natsMaxBytes: int(env, 'NATS_MAX_BYTES', 1_073_741_824, 1_048_576, 1_099_511_627_776),
    natsStreamReplicas: int(env, 'NATS_STREAM_REPLICAS', 1, 1, 5),
    streamBehindMaxS: int(env, 'STREAM_BEHIND_MAX_S', 5, 1, 3_600),
    tracing: tracingOn(env),
  };
}

/** One environment variable as documented: docs/configuration.md's table is generated from this list (`npm run docs:settings`). */
export interface Setting {
  /** The variable; its Config field is its camelCase name, whose default `loadConfig({})` gives. */
  name: string;
  meaning: string;
  /** Added after the default (what changes it). */
  defaultNote?: string;
  /** Said instead of the default (when the value alone would mislead). */
  defaultText?: string;
}

/**
 * Every variable loadConfig reads, in the order of the documentation. A test fails when a variable
 * read above is missing here, or when docs/configuration.md differs from the table generated from
 * this list and the defaults loadConfig gives (scripts/settings-table.ts).
 */
export const SETTINGS: readonly Setting[] = [
  { name: 'NODE_ENV', meaning: '`development`, `production` or `test`; anything else stops the start. `production` changes the defaults of `HOST` and `CORS_ORIGINS`, and makes `/readyz` degraded without `ENGINE_ADMIN_TOKEN`.', defaultText: 'unset (`development`)' },
  { name: 'PORT', meaning: 'HTTP and WebSocket port (0..65535).' },
  { name: 'HOST', meaning: 'Interface to bind.', defaultNote: '(`0.0.0.0` when `NODE_ENV=production`)' },
  { name: 'LOG_LEVEL', meaning: 'pino level: fatal, error, warn, info, debug, trace, silent.' },
  { name: 'DATABASE_URL', meaning: "The indexer's PostgreSQL (`postgres://…`). Unset: lists are empty, single objects answer as for an empty database, `/readyz` is degraded." },
  { name: 'DB_POOL_MAX', meaning: 'Connections in the read pool.' },
  {
    name: 'DB_ADDRESS_IN_FLIGHT',
    meaning:
      'Reads of one client address (`request.ip`, IPv6 by /64) holding a turn of the read pool at once; while the pool is full, the next free turn goes round the addresses with reads waiting and, within one, its parties (deficit round robin, ADR 0380). `0` (default): as many as the pool, so one client alone still uses every connection. The gateway\'s own reads (the live path, the market catalog) share as one address of their own.',
  },
  {
    name: 'DB_ADDRESS_QUEUE',
    meaning:
      'Reads of one client address waiting for their turn of the read pool; one more is refused before it is sent, 429 `budget_exhausted` (`budget: "database_reads"`, Retry-After 1 s). A read that waits for its turn longer than the database deadline answers 503 `database_unavailable` without marking the database down. Counted per replica.',
  },
  { name: 'LIST_SHARED_READS', meaning: 'Identical list reads (same route and parameters) arriving while one is in flight share the next database read and its JSON body, never one that started before they arrived; `false` reads each alone. See docs/rest.md.' },
  { name: 'LIST_ROW_CACHE_BYTES', meaning: 'Memory for fill, event and deposit rows kept as written JSON, by row version (key and `xmin`): a page whose rows are all kept costs the database an index read of its keys only. Each row is counted with its version and a fixed cost of 640 bytes (about 30 000 fill legs in the default; ADR 0161). Least recently used first out; `0` reads every row each time. Bound to the database server it was read from (its start time, read by every such statement): a restored, failed-over or replaced database empties it before any read is served (`bff_list_row_cache_database_changes_total`). See docs/rest.md.' },
  { name: 'DB_CONNECT_TIMEOUT_S', meaning: 'A read against an unreachable database answers 503 `database_unavailable` within this bound. Every query of the gateway (reads, session-key lookups, the event store, faucet facts, the candle rebuild) also has one overall deadline: `DB_CONNECT_TIMEOUT_S` + 3 × `DB_STATEMENT_TIMEOUT_MS` + 1 s.' },
  { name: 'DB_STATEMENT_TIMEOUT_MS', meaning: 'Server-side statement timeout of every query.' },
  { name: 'ENGINE_BASE_URL', meaning: 'The matching engine (http or https URL).' },
  { name: 'ENGINE_ADMIN_TOKEN', meaning: "Bearer token of the engine's admin API. Unset: no SSE bridge, no order book polling, no live open-orders read; WebSocket clients connect and receive nothing, the start logs a warning naming it, `/readyz` reports `stream.enabled: false` and, with `NODE_ENV=production`, is degraded (503), as is the replica probe `/readyz/replica`." },
  {
    name: 'CLIENT_ORDER_CLAIM_MARGIN_MS',
    meaning:
      'A `clientOrderId` claimed by a place whose outcome is unknown (504, 502) is held until the engine can no longer accept the place\'s signature (its timestamp + 30 s) plus this margin (the clocks apart, the engine\'s events on their way); halfway into it the claim is settled from the engine\'s events, else the mirror or the engine\'s open orders (docs/trading.md "Client order ids").',
  },
  { name: 'ENGINE_TIMEOUT_MS', meaning: 'Deadline of a whole engine call (waiting for a pooled connection, headers and body); past it a proxied call answers 504 `engine_timeout` and the engine connection is closed.' },
  { name: 'ENGINE_CONNECTIONS', meaning: 'Keep-alive connections in the engine pool, shared in fair order between client addresses (`ENGINE_ADDRESS_IN_FLIGHT`). A full concurrent batch (docs/trading.md "Batches") has at most `ENGINE_ADDRESS_IN_FLIGHT` of its items at the engine at once; the rest wait for their turn.' },
  {
    name: 'ENGINE_ADDRESS_IN_FLIGHT',
    meaning:
      'Engine calls of one client address (IPv6 by /64) on the engine pool at once, all its parties together (a batch item is one call); its further calls wait for their turn, taken in fair order between addresses and, within an address, between parties (docs/trading.md "A fair share of the engine"). At most `ENGINE_CONNECTIONS`. The gateway\'s own calls (health, order book polls) share as one address of their own.',
  },
  { name: 'ENGINE_ADDRESS_QUEUE', meaning: 'Engine calls of one client address waiting for their turn; past it a call is refused at once, 429 `budget_exhausted` (`budget: "engine_calls"`, Retry-After 1 s; in a batch, that item\'s outcome). What one address holds is thus at most `ENGINE_ADDRESS_IN_FLIGHT` + `ENGINE_ADDRESS_QUEUE` calls, each bounded by `ENGINE_TIMEOUT_MS`.' },
  {
    name: 'TRADING_ADDRESS_IN_PROGRESS',
    meaning:
      'Requests of one client address (IPv6 by /64) in progress at once on the trading routes (orders, batches, cancels, session creation, the faucet, the proxied reads), from their first byte to their answer; one more is refused at once, before its body is read, 429 `budget_exhausted` (`budget: "requests_in_progress"`, Retry-After 1 s), spending nothing of the address\'s budget. Bounds what one address can make the gateway parse, check and verify ahead of everyone else (docs/trading.md "A fair share of the engine"). `0` disables it (behind a proxy that does not pass the client address, every client is one address).',
  },
  { name: 'ORDERBOOK_SHARED_READS', meaning: 'Identical `GET /v1/orderbook` requests arriving while one is in flight share the next engine call (never one that started before they arrived); `false` forwards each read alone. See docs/trading.md.' },
  { name: 'WS_ORDERBOOK_POLL_MS', meaning: 'Order book polling period for `orderbook.snapshot` frames.' },
  { name: 'WS_ORDERBOOK_DEPTH', meaning: 'Levels per polled book (1..100).' },
  { name: 'BOOK_MIRROR_WAIT_MS', meaning: "How long the order book kept from events (`orderbook.delta`) waits for the indexer's mirror to reach the stream's position when it seeds a market order by order; past it the market shows the engine's price levels meanwhile (they may drift on a cancel of an order resting before) and the mirror is read again until it can seed (docs/stream.md \"Order book from events\")." },
  { name: 'WS_MAX_CONNECTIONS', meaning: 'WebSocket connections accepted at once; more are refused at upgrade (503 `too_many_connections`). The file limit may lower it: see `FD_HEADROOM`.' },
  { name: 'WS_CLIENT_BUFFER_BYTES', meaning: 'Unsent bytes a client may accumulate before it is closed with code 4008.' },
  { name: 'WS_PING_MS', meaning: "Ping period; a peer that does not answer the gateway's ping (with its payload) before the next one is dropped. The connections are pinged in ten slices spread over the period (each once per period), not all at once." },
  { name: 'WS_DEFLATE', meaning: 'Negotiate permessage-deflate with stream connections that ask for it (`compress=deflate` in the URL, docs/stream.md "Compression"); false: never.' },
  {
    name: 'WS_DEFLATE_OVERSIZE_PER_IP',
    meaning:
      'Deflate connections of one client address (`request.ip`, IPv6 by /64) closed with 1009 for a compressed message inflating past `WS_CLIENT_MESSAGE_MAX_BYTES`, per `RATE_LIMIT_WINDOW_MS`; at this count the address\'s further `compress=deflate` upgrades are refused until the window ends, 429 `budget_exhausted` (`budget: "deflate_oversize"`, Retry-After), before the handshake; plain connections are still accepted. Counted per replica. `0`: never refused.',
  },
  {
    name: 'WS_DEFLATE_CONNECTIONS_PER_IP',
    meaning:
      'Deflate stream connections (`compress=deflate`, the extension offered) of one client address (`request.ip`, IPv6 by /64) open at once; one more is refused before the handshake, 429 `budget_exhausted` (`budget: "deflate_connections"`, Retry-After 1 s); plain connections are still accepted (up to `WS_MAX_CONNECTIONS_PER_IP`). What a deflate connection costs of its own (its opening\'s frames compressed for it, the inflate state of a client that sends compressed messages: ~60 KiB) is bounded per address by this (ADR 0366); the live frames are compressed once for all of them (ADR 0367). Counted per replica. `0`: no bound.',
  },
  {
    name: 'PROOF_PAGES_PER_IP',
    meaning:
      'Pages of `GET /v1/users/{party}/user-batches/proofs` of one client address (`request.ip`, IPv6 by /64) in progress at once, from before their reads to their answer; one more is refused before anything is read, 429 `budget_exhausted` (`budget: "proof_pages"`, Retry-After 1 s). Pages with no kept answer are built one at a time, in a fair order between addresses and, within one, between parties (ADR 0379). A verifying client keeps three pages in flight; the console verifies its history and its account at once (six), and a refresh may overlap them. Counted per replica.',
  },
  {
    name: 'PROOF_BUILD_AHEAD',
    meaning:
      'Build the proofs of user batches as the chain records them, before any client asks (ADR 0382): at start the newest manifests whose answers `PROOF_CACHE_BYTES` holds, then each new one, in the build lane as the gateway\'s own turn (a client\'s cold page is never behind it). A party\'s first verification then finds its pages kept instead of waiting for each to be built (about 15 µs of CPU per event). Bounded by the cache of answers (`PROOF_CACHE_BYTES`, an hour). `false`: proofs are built only when asked. Per replica.',
  },
  {
    name: 'PROOF_CACHE_BYTES',
    meaning:
      'Bytes of verified proof answers kept (256 MiB; a history of 100 000 events is about 66 MB of answers), least recently used out first, each for an hour (ADR 0063, ADR 0360): a history verified again is served without building a page. With `PROOF_BUILD_AHEAD`, the proofs built at start are those of the newest manifests this holds (about one event per 800 bytes). `0`: nothing kept. Per replica, off the JavaScript heap (Buffers).',
  },
  { name: 'WS_DEFLATE_THRESHOLD_BYTES', meaning: 'On a deflate connection, frames smaller than this are sent uncompressed (compressing them costs more CPU than it saves bytes).' },
  { name: 'WS_CLIENT_MESSAGE_MAX_BYTES', meaning: 'Largest message a stream client may send (64 KiB: a full 50-item `order.batch` fits); a larger one is answered `payload_too_large` unread, one over four times this closes the connection with 1009.' },
  { name: 'WS_CLIENT_MESSAGES_PER_S', meaning: 'Messages a second a stream client may send, sustained (token bucket); past it (and its burst) the client is closed with 1008.' },
  { name: 'WS_CLIENT_MESSAGE_BURST', meaning: 'Messages a stream client may send at once above that rate.' },
  {
    name: 'WS_ADDRESS_MESSAGES_PER_S',
    meaning:
      'Messages a second all stream connections of one client address (`request.ip`, IPv6 by /64) may send together, sustained, with bursts of twice that (one token bucket per address, checked before a message is read). The connection whose message finds it empty is closed with 1008, and the address\'s upgrades are refused for 10 s, 429 `budget_exhausted` (`budget: "message_rate"`, Retry-After). Ten times the address\'s trading budget at its defaults (`RATE_LIMIT_IP_MAX` per minute): what an honest client sends is far below it. Counted per replica. `0`: no bound (behind a proxy that does not pass the client address).',
  },
  { name: 'WS_HISTORY_SIZE', meaning: 'Frames kept in memory for `/v1/stream?since=<seq>` replay.' },
  { name: 'ACCOUNT_IDLE_MS', meaning: "The live account book keeps a party's complete account while a stream connection asks `account.update` for it, and for this long after its last `GET /v1/users/:party/account` (or its last such connection's close); then it is evicted and its next read is seeded again from the database (docs/account.md).", defaultNote: '(10 minutes)' },
  { name: 'ACCOUNT_READ_PARTIES_MAX', meaning: 'Most complete accounts kept for reads alone (parties no stream connection needs); past it the least recently read is evicted at once. Memory and per-event work grow with the accounts kept.' },
  { name: 'SSE_IDLE_MS', meaning: 'An engine SSE connection silent this long (no event, no heartbeat) is reconnected.' },
  { name: 'SSE_MAX_EVENT_BYTES', meaning: "Longest unfinished line or event (characters) the engine SSE bridge, and the relay's, holds; an engine sending more has its connection dropped (`bff_sse_oversized_total`, an error logged). When the engine's head says that was an event (one signed order with a huge body makes one), the bridge takes it from the indexer's `events` table if it already holds it, else skips it (control connections get `stream.gap`, /readyz stays ready) and resumes after it at once; the relay never publishes an event above it. Otherwise it reconnects from its last seq." },
  { name: 'AUTH_DISABLED', meaning: '`true`: the authenticate and own-party guards are no-ops, and any `party` may be streamed.' },
  { name: 'FAUCET_ENABLED', meaning: 'Enables `POST /v1/users/:party/faucet`.' },
  { name: 'FAUCET_AMOUNT', meaning: 'Amount of one faucet top-up.' },
  { name: 'FAUCET_COOLDOWN_S', meaning: 'Seconds between two faucet top-ups of one party.' },
  { name: 'FAUCET_CEILING', meaning: 'No top-up when the balance is at or above this.' },
  { name: 'CORS_ORIGINS', meaning: 'Comma list of allowed origins, or `*`.', defaultNote: '(none when `NODE_ENV=production`)' },
  { name: 'VAULT_OPERATOR', meaning: 'Operator whose vault `GET /v1/vault` answers; unset: the only vault.' },
  { name: 'RATE_LIMIT_MAX', meaning: 'Requests per window of one **verified** party on the trading and faucet routes (docs/trading.md "Rate limit").' },
  { name: 'RATE_LIMIT_IP_MAX', meaning: 'Requests per window of one client IP (`request.ip`) on the same routes, signed or not.', defaultNote: '(twice `RATE_LIMIT_MAX`)' },
  { name: 'RATE_LIMIT_WINDOW_MS', meaning: 'The rate-limit window.' },
  { name: 'SIGNATURE_WINDOW_MS', meaning: 'How far (ms) a signature\'s timestamp may be from the gateway\'s clock, either way; at most the engine\'s own 30 s (a tighter window only refuses more). It is also how long the gateway refuses signatures after the fleet\'s Redis lost its replay memory (docs/security.md).' },
  { name: 'REPLAY_MEMORY_MAX', meaning: 'Unexpired signatures the replay memory holds; when it is full of them, new signed requests get 503 `replay_memory_full` (it never forgets a signature still inside its window).' },
  { name: 'HTTP_HEADERS_TIMEOUT_MS', meaning: 'The whole header block of a request must arrive within this time (else 408 `request_timeout`, socket closed). At most `HTTP_REQUEST_TIMEOUT_MS`.' },
  { name: 'HTTP_REQUEST_TIMEOUT_MS', meaning: 'The whole request, headers and body, must arrive within this time (else 408, socket closed).' },
  { name: 'HTTP_KEEP_ALIVE_TIMEOUT_MS', meaning: 'An idle keep-alive connection is closed after this time (Node closes it 1 s later still). Behind a proxy that keeps connections to the replicas, the proxy must close an idle one first: at most 80 % of this (the shipped manifests set 75 000 for a proxy\'s 60 s; docs/operations.md "Keep-alive").' },
  { name: 'HTTP_IDLE_TIMEOUT_MS', meaning: 'A socket on which nothing moves for this long is closed (Fastify `connectionTimeout`). Must exceed `ENGINE_TIMEOUT_MS`. Streams are exempt once upgraded (they have pings).' },
  { name: 'HTTP_MAX_CONNECTIONS_PER_IP', meaning: "Concurrent TCP connections per peer address (IPv6 by its /64), streams included; over it 429 `too_many_connections` and the socket is closed. `0` disables it: do so behind a reverse proxy, where every connection comes from the proxy, and cap per client there (the nginx template's `limit_conn`; `npm run fleet` sets `0`)." },
  { name: 'WS_MAX_CONNECTIONS_PER_IP', meaning: 'Concurrent `/v1/stream` connections per client: `request.ip` (the forwarded client behind a `TRUST_PROXY`, as the rate limits), IPv6 counted by its /64; over it the upgrade is refused with 429 `too_many_connections`. `0`: no per-client cap.' },
  {
    name: 'SESSION_LOOKUPS_PER_IP',
    meaning:
      'Party proofs of one client address (IPv6 by /64) per `RATE_LIMIT_WINDOW_MS` whose session the gateway does not hold and must look up in the database (stream upgrades and subscribe messages); past it such a proof is refused 429 / `stream.error` `budget_exhausted` (`budget: "session_lookups"`). Proofs of sessions already known cost nothing and are not counted. Shared by the fleet with `REDIS_URL`.',
  },
  {
    name: 'SNAPSHOT_READS_PER_IP',
    meaning:
      'Reads of user channel snapshots per client address and `RATE_LIMIT_WINDOW_MS`: one per party and per channel (`order.update`: the engine\'s live orders; `fill`: the last 50 fills from the database) of a connection opened or subscribing with a snapshot; past it the upgrade is refused 429 or the subscribe answered `stream.error` `budget_exhausted` (`budget: "snapshot_reads"`). Shared by the fleet with `REDIS_URL`.',
  },
  {
    name: 'FD_HEADROOM',
    meaning:
      "File descriptors kept free of stream connections under the process's open-file limit (`RLIMIT_NOFILE`, read at start; `ulimit -n`), for probes, `/metrics`, REST and the gateway's own files and connections (database, engine, Redis, NATS). The stream takes at most the lesser of `WS_MAX_CONNECTIONS` and limit − headroom (more are refused with 503 `too_many_connections` before the upgrade), and the HTTP server at most limit − headroom / 2 connections in all (more are closed as they arrive), so the process never meets its limit and keeps answering `/healthz` and `/metrics` under any number of sockets. `auto`: 5 % of the limit, at least 256 (limit 20 000: 1 000, so 19 000 streams). Unknown or unlimited limit: only `WS_MAX_CONNECTIONS` applies. The start logs the limits applied; `bff_ws_connection_limit` and `process_max_fds` export them (docs/operations.md).",
    defaultText: '`auto`',
  },
  { name: 'TRUST_PROXY', meaning: "Who may set `X-Forwarded-For`, so that `request.ip` (the anonymous rate-limit key) is the real client behind a load balancer. A comma list of the proxies' addresses or CIDRs (`127.0.0.1, 10.0.0.0/8`): the client is the rightmost forwarded address not in the list; a spoofed address prepended by the client is never used. Or a hop count (`1` behind one nginx): safe only when nothing but the proxy can reach the replica (a direct caller could forge the header), so prefer addresses. Unset: the socket's address (every caller behind a proxy would share one bucket).", defaultText: 'unset (trust nothing)' },
  { name: 'REDIS_URL', meaning: '`redis://host:port/db`: rate limits, the signature replay memory and the faucet cooldown lock are shared by every replica (docs/fleet.md). Unset: each is kept in process memory, as for one gateway.' },
  { name: 'REDIS_PREFIX', meaning: 'Prefix of every key the gateway writes in Redis (one prefix per deployment sharing a Redis).' },
  { name: 'REDIS_SENTINELS', meaning: "Redis Sentinel instead of `REDIS_URL` (exclusive): `host:port,host:port,…` of the sentinels; the gateway asks them for the primary named `REDIS_SENTINEL_NAME` and follows a failover by itself (docs/operations.md \"Redis Sentinel\").", defaultText: 'unset (`REDIS_URL`, or no Redis)' },
  { name: 'REDIS_SENTINEL_NAME', meaning: 'The primary\'s name as the sentinels monitor it (`sentinel monitor <name> …`).' },
  { name: 'REDIS_PASSWORD', meaning: 'With `REDIS_SENTINELS`: the password of the Redis primary and replicas (with `REDIS_URL` it is part of the URL).', defaultText: 'unset (none)' },
  { name: 'REDIS_SENTINEL_PASSWORD', meaning: 'With `REDIS_SENTINELS`: the password of the sentinels themselves.', defaultText: 'unset (none)' },
  { name: 'REDIS_WAIT_REPLICAS', meaning: 'Replicas that must acknowledge a signature remembered in the replay memory (and a faucet claim) within 250 ms (Redis `WAIT`) before the request is accepted; otherwise it is refused with 503 `shared_state_unavailable`. So a failover never promotes a replica that lacks a signature already accepted: it cannot be accepted twice (docs/adr/0125).', defaultNote: '(`1` with `REDIS_SENTINELS`, else `0`)' },
  { name: 'NATS_URL', meaning: '`nats://host:port`, or a comma-separated list of a cluster\'s seeds (`nats://n1:4222,nats://n2:4222,nats://n3:4222`; any one answering is enough, the others are learned from it): the gateway takes engine events from the JetStream stream the relay fills instead of opening its own engine SSE connection (docs/fleet.md). Unset: its own SSE connection, as before.' },
  { name: 'NATS_STREAM', meaning: 'The JetStream stream name.' },
  { name: 'NATS_SUBJECT', meaning: 'The subject the relay publishes engine events on.' },
  { name: 'NATS_MAX_AGE_S', meaning: "Relay: the stream keeps events this long (at least one day, so a new replica can rebuild the day's candles and fill its replay history).", defaultNote: '(2 days)' },
  { name: 'NATS_MAX_BYTES', meaning: 'Relay: and at most this many bytes (oldest dropped first).', defaultNote: '(1 GiB)' },
  { name: 'NATS_STREAM_REPLICAS', meaning: 'Relay: how many NATS servers keep a copy of the stream it creates (1..5; JetStream `num_replicas`). `3` on a 3-node cluster in production (docs/operations.md), `1` for a single server. A stream that already exists keeps its count; a different one is logged as a warning and shown in `bff_relay_stream_replicas`.' },
  { name: 'STREAM_BEHIND_MAX_S', meaning: "With `NATS_URL`: a replica whose newest event is older than the engine's head by more than this many seconds is *behind*: `/readyz` degraded, `stream.lagging` to control connections, a warning in the log (docs/fleet.md \"Behind the engine\")." },
];
