// `npm run soak`: a bounded fault-injection soak of the whole system. Starts embedded PostgreSQL, the
// reference engine, the indexer, the gateway (its engine traffic through a cuttable proxy) and a busy
// simulator as separate processes; runs public, party, resuming and slow stream clients, REST readers
// and a resource sampler; injects the faults of schedule.ts; then checks every client's frames
// against the engine's own event log, REST answers and deadlines, resource slopes and recovery
// times. Prints the figures, writes them as JSON next to the services' logs, exits 1 on a failed check.
// See docs/reliability.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { request } from 'undici';
import { botParties } from '../simulator/simulator.js';
import { httpOk, waitFor } from '../stack/children.js';
import { GATEWAY_NODE_FLAGS } from '../stack/gateway-node-flags.js';
import { freePort } from '../../bench/processes.js';
import { EngineHistory, followEngine } from './engine-log.js';
import { parseSoakOptions } from './options.js';
import { startService, signal, type Service } from './processes.js';
import { startProxy } from './proxy.js';
import { RestReaders, type RestTarget } from './rest-readers.js';
import { authorizeSession, signedGet, soakPartyId, unknownSession, type SoakParty } from './soak-party.js';
import { sample, slope, type Sample } from './resources.js';
import { faultSchedule, repeatSchedule, type Fault } from './schedule.js';
import { reconnectStorm, type StormResult } from './storm.js';
import { StreamClient, type ClientSpec } from './stream-client.js';
import { BookClient } from './book-client.js';
import { failed, verifySegment, type SegmentVerdict } from './verify.js';
import { TRADE_ID } from './frames.js';
import { machine, renderMarkdown, writeDocsBlock } from './report.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOKEN = 'soak-admin-token';
const SEED = 1;
// The gateway's read deadline is DB_CONNECT_TIMEOUT_S + 3 × DB_STATEMENT_TIMEOUT_MS (docs/rest.md);
// the soak shortens the statement timeout so a stalled database is judged within 9 s.
const DB_CONNECT_TIMEOUT_S = 3;
const DB_STATEMENT_TIMEOUT_MS = 2000;
const ENGINE_TIMEOUT_MS = 5000;
const DEADLINE_MS = Math.max(DB_CONNECT_TIMEOUT_S * 1000 + 3 * DB_STATEMENT_TIMEOUT_MS, ENGINE_TIMEOUT_MS);
const HANG_MS = DEADLINE_MS + 2000; // + scheduling slack on a loaded machine
// A quarter of the default per-client bound, so the slow readers trip it within their pauses (the
// kernel's socket buffers on loopback absorb several MiB first) and a replay must be paced to pass.
const WS_CLIENT_BUFFER_BYTES = 262_144;

const opts = (() => {
  try {
    return parseSoakOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
})();

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const t0 = Date.now();
const say = (msg: string): void => void process.stdout.write(`[soak ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const logDir = join(root, '.data', 'soak', stamp);
mkdirSync(logDir, { recursive: true });

const unexpected: string[] = [];
const onUnexpectedExit = (name: string, why: string): void => {
  unexpected.push(`${name} exited unexpectedly (${why})`);
  say(`FAIL ${name} exited unexpectedly (${why})`);
};
const services: Service[] = [];
// The gateways run with the node flags of production (or those given to compare: --gateway-node-flags).
const GATEWAY_ENTRY = 'src/main.ts';
const gatewayNodeFlags = opts.gatewayNodeFlags ?? GATEWAY_NODE_FLAGS;
const svc = (name: string, entry: string, env: Record<string, string>, onLine?: (l: string) => void): Service => {
  const nodeFlags = entry === GATEWAY_ENTRY ? gatewayNodeFlags : [];
  const s = startService(name, entry, env, { cwd: root, logDir, onUnexpectedExit, nodeFlags, ...(onLine ? { onLine } : {}) });
  services.push(s);
  return s;
};

/** /readyz is back: 200, or 503 whose only reasons are the 5-minute notes of an announced gap. */
async function readyish(gatewayUrl: string): Promise<boolean> {
  const res = await request(`${gatewayUrl}/readyz`, { headersTimeout: 2000, bodyTimeout: 2000 });
  const body = (await res.body.json().catch(() => ({}))) as { reasons?: string[] };
  if (res.statusCode === 200) return true;
  return res.statusCode === 503 && Array.isArray(body.reasons) && body.reasons.length > 0 && body.reasons.every((r) => /gap|reset|replaced/i.test(r));
}

async function main(): Promise<number> {
  say(`logs in ${logDir}`);
  const abort = (): string | null => unexpected[0] ?? null;

  // 1. Database: PGlite in its own process (so it can be stopped), in memory.
  let databaseUrl = '';
  const db = svc('database', 'sandbox/soak/pglite-main.ts', { SOAK_DB_PORT: '0' }, (l) => {
    if (l.startsWith('DB_READY ')) databaseUrl = l.slice(9).trim();
  });
  await waitFor('database', async () => databaseUrl !== '', 30_000, abort);

  // 2. Engine, and the soak's own reader of its event log. It listens on a port of the kernel's
  // choosing and says which (a port found free first and listened on later was taken meanwhile by
  // another process's connection: a CI run saw EADDRINUSE); a restart listens on the same one.
  let engineUrl = '';
  let engine = svc('engine', 'sandbox/engine/main.ts', { ENGINE_PORT: '0', ENGINE_HOST: '127.0.0.1', ENGINE_ADMIN_TOKEN: TOKEN }, (l) => {
    const url = /"msg":"engine listening","url":"([^"]+)"/.exec(l)?.[1];
    if (url) engineUrl = url;
  });
  await waitFor('engine', async () => engineUrl !== '' && (await httpOk(`${engineUrl}/healthz`)), 30_000, abort);
  const enginePort = Number(new URL(engineUrl).port);
  const engineEnv = { ENGINE_PORT: String(enginePort), ENGINE_HOST: '127.0.0.1', ENGINE_ADMIN_TOKEN: TOKEN };
  const histories = [new EngineHistory(0)];
  let follower = followEngine(engineUrl, TOKEN, histories[0]!);
  const current = (): EngineHistory => histories[histories.length - 1]!;

  // 3. Indexer, straight to the engine.
  svc('indexer', 'sandbox/indexer/main.ts', {
    DATABASE_URL: databaseUrl, ENGINE_BASE_URL: engineUrl, ENGINE_ADMIN_TOKEN: TOKEN, VAULT_OPERATOR: 'operator-1', INDEXER_ON_ENGINE_RESET: 'wipe', LOG_LEVEL: 'warn',
  });
  const probe = postgres(databaseUrl, { max: 1, prepare: false, onnotice: () => {}, connect_timeout: 3 });
  await waitFor('indexer migrations', async () => (await probe.unsafe(`SELECT 1 FROM schema_migrations WHERE version = '0015_fired_limit'`).simple()).length === 1, 40_000, abort);
  await probe.end({ timeout: 1 });

  // 4. Gateway: its engine traffic (SSE, book polls, proxied calls) and its database connections
  // through proxies that can cut, freeze, trickle and corrupt them.
  const proxy = await startProxy(enginePort);
  const dbProxy = await startProxy(Number(new URL(databaseUrl).port));
  const gatewayDatabaseUrl = databaseUrl.replace(/:\d+\//, `:${dbProxy.port}/`);
  // Found free just before the gateway starts (the window in which another process could take it is its start).
  const gatewayPort = await freePort();
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const wsUrl = `ws://127.0.0.1:${gatewayPort}`;
  const gateway = svc('gateway', GATEWAY_ENTRY, {
    PORT: String(gatewayPort), HOST: '127.0.0.1', DATABASE_URL: gatewayDatabaseUrl, ENGINE_BASE_URL: `http://127.0.0.1:${proxy.port}`, ENGINE_ADMIN_TOKEN: TOKEN,
    AUTH_DISABLED: 'true', FAUCET_ENABLED: 'true', WS_CLIENT_BUFFER_BYTES: String(WS_CLIENT_BUFFER_BYTES), VAULT_OPERATOR: 'operator-1', CORS_ORIGINS: '*', DB_POOL_MAX: '4', LOG_LEVEL: 'warn',
    DB_CONNECT_TIMEOUT_S: String(DB_CONNECT_TIMEOUT_S), DB_STATEMENT_TIMEOUT_MS: String(DB_STATEMENT_TIMEOUT_MS), ENGINE_TIMEOUT_MS: String(ENGINE_TIMEOUT_MS),
    // Every soak client comes from 127.0.0.1: the per-address caps must hold a reconnect storm.
    WS_MAX_CONNECTIONS_PER_IP: String(opts.stormClients + 100), HTTP_MAX_CONNECTIONS_PER_IP: String(2 * opts.stormClients + 200),
    // and their messages together (a storm's subscribes at once) must not close them (ADR 0350).
    WS_ADDRESS_MESSAGES_PER_S: '0',
  });
  await waitFor('gateway', () => httpOk(`${gatewayUrl}/readyz`), 40_000, abort);
  // A second gateway with authentication on, for REST only (no engine token: no stream, no polls),
  // so signed reads exercise the session-key lookup in the database under every fault.
  const authPort = await freePort();
  const authUrl = `http://127.0.0.1:${authPort}`;
  svc('gateway-auth', GATEWAY_ENTRY, {
    PORT: String(authPort), HOST: '127.0.0.1', DATABASE_URL: gatewayDatabaseUrl, ENGINE_BASE_URL: `http://127.0.0.1:${proxy.port}`, ENGINE_ADMIN_TOKEN: '',
    AUTH_DISABLED: 'false', FAUCET_ENABLED: 'false', VAULT_OPERATOR: 'operator-1', CORS_ORIGINS: '*', DB_POOL_MAX: '2', LOG_LEVEL: 'warn',
    DB_CONNECT_TIMEOUT_S: String(DB_CONNECT_TIMEOUT_S), DB_STATEMENT_TIMEOUT_MS: String(DB_STATEMENT_TIMEOUT_MS), ENGINE_TIMEOUT_MS: String(ENGINE_TIMEOUT_MS),
  });
  await waitFor('gateway with auth', () => httpOk(`${authUrl}/healthz`), 40_000, abort);
  let soakSession = await authorizeSession(engineUrl);
  const strangerSession = unknownSession();

  // 5. Simulator, straight to the engine.
  const simEnv = { ENGINE_BASE_URL: engineUrl, ENGINE_ADMIN_TOKEN: TOKEN, SIM_RATE: String(opts.rate), SIM_BOTS: '8', SIM_SEED: String(SEED) };
  let simulator = svc('simulator', 'sandbox/simulator/main.ts', simEnv);
  const parties = botParties(SEED, 3);
  say(`stack up in ${((Date.now() - t0) / 1000).toFixed(1)} s: gateway ${gatewayUrl}, engine ${engineUrl}, database ${databaseUrl}, simulator ${opts.rate} actions/s`);

  // 6. Clients.
  const specs: ClientSpec[] = [
    { name: 'public-all', filter: {}, resume: false, control: false },
    { name: 'public-btc', filter: { kinds: 'trade,engine.order_filled,engine.order_placed,engine.order_cancelled', markets: 'BTC-PERP' }, extra: { snapshot: 'false' }, resume: false, control: true },
    { name: 'party-1', filter: { party: parties[0]! }, resume: false, control: false },
    { name: 'resume-eth', filter: { markets: 'ETH-PERP' }, resume: true, control: true },
    { name: 'resume-party', filter: { party: `${parties[1]},${parties[2]}` }, extra: { heartbeat: '5' }, resume: true, control: true },
    { name: 'slow-all', filter: {}, resume: true, control: true, slow: { pauseMs: 40_000, everyMs: 55_000 } },
    { name: 'slow-trades', filter: { kinds: 'trade,candle.update,engine.order_filled' }, resume: true, control: true, slow: { pauseMs: 1500, everyMs: 4000 } },
  ];
  const clients = specs.map((s) => new StreamClient(wsUrl, s));
  for (const c of clients) c.start();
  // A front end drawing every market's book from deltas: the gateway keeps the books from events.
  const bookClient = new BookClient(`${wsUrl}/v1/stream`);
  bookClient.start();
  const probeClient = clients[0]!;
  type Waiter = { history: EngineHistory; above: number; resolve: () => void };
  let waiters: Waiter[] = [];
  probeClient.onFrame = (k, seq, h) => {
    if (waiters.length === 0) return;
    waiters = waiters.filter((w) => {
      const ok = seq > w.above && (k === TRADE_ID ? w.history.tradeHash[seq] === h : w.history.hash[seq] === h);
      if (ok) w.resolve();
      return !ok;
    });
  };
  /** ms until the probe client receives a frame of `history` above `above`; null after `limitMs`. */
  const streamBack = async (history: EngineHistory, above: number, since: number, limitMs = 60_000): Promise<number | null> => {
    let resolveFn!: () => void;
    const got = new Promise<void>((r) => (resolveFn = r));
    waiters.push({ history, above, resolve: resolveFn });
    const ok = await Promise.race([got.then(() => true), sleep(limitMs).then(() => false)]);
    return ok ? Date.now() - since : null;
  };
  const readyBack = async (since: number, limitMs = 60_000): Promise<number | null> => {
    const end = since + limitMs;
    while (Date.now() < end) {
      if (await readyish(gatewayUrl).catch(() => false)) return Date.now() - since;
      await sleep(100);
    }
    return null;
  };

  /** ms until a proxied order book read answers 200 again; null after `limitMs`. */
  const bookBack = async (since: number, limitMs = 60_000): Promise<number | null> => {
    while (Date.now() < since + limitMs) {
      const res = await request(`${gatewayUrl}/v1/orderbook?market=BTC-PERP&depth=5`, { headersTimeout: HANG_MS, bodyTimeout: HANG_MS }).catch(() => null);
      await res?.body.dump();
      if (res?.statusCode === 200) return Date.now() - since;
      await sleep(100);
    }
    return null;
  };
  /** The gateway's count of engine SSE connections dropped for an over-long line. */
  const oversizedDrops = async (): Promise<number> => {
    const res = await request(`${gatewayUrl}/metrics`).catch(() => null);
    const text = res ? await res.body.text() : '';
    return Number(/^bff_sse_oversized_total (\d+)/m.exec(text)?.[1] ?? 0);
  };

  // 7. REST readers and the resource sampler.
  const pauses: Array<[number, number]> = [];
  const pausedBetween = (from: number, to: number): number =>
    pauses.reduce((sum, [a, b]) => sum + Math.max(0, Math.min(to, b) - Math.max(from, a)), 0);
  const plain = (path: string): RestTarget => ({ label: path, url: `${gatewayUrl}${path}`, pausable: true });
  const signed = (path: string, who: () => SoakParty, label: string): RestTarget => ({ label: `${label} ${path}`, url: `${authUrl}${path}`, headers: () => signedGet(who(), path), pausable: false });
  const ownFills = `/v1/users/${encodeURIComponent(soakPartyId)}/fills?limit=5`;
  const rest = new RestReaders([
    plain('/v1/fills?limit=20'),
    plain('/v1/orders?market=BTC-PERP&limit=20'),
    plain('/v1/orderbook?market=ETH-PERP&depth=5'),
    plain('/v1/events?since=0&limit=50'),
    plain(`/v1/users/${parties[0]}/positions?status=all`),
    signed(ownFills, () => soakSession, 'auth, own session'),
    plain(`/v1/users/${parties[1]}/fills?limit=20`),
    plain('/v1/vault'),
    signed(ownFills, () => strangerSession, 'auth, unknown session'),
    plain('/v1/markets'),
    plain('/readyz'),
  ], HANG_MS, pausedBetween);
  rest.start(4, 50);
  const samples: Sample[] = [];
  let gatewayStopped = false;
  const sampler = setInterval(() => {
    if (gatewayStopped) return;
    void sample(gateway.pid, gatewayUrl).then((s) => s && samples.push(s));
  }, 2000);

  // 8. Faults.
  const schedule = repeatSchedule(faultSchedule(opts.short).filter((f) => opts.only === null || opts.only.includes(f.kind)), opts.repeat);
  /** A fault that did not have the effect it exists for (the soak would then prove nothing). */
  const faultFailures: string[] = [];
  const outcomes: Array<Fault & { startedAtS: number; recovery: Record<string, number | null>; detail?: unknown }> = [];
  const faultsStart = Date.now();
  /** [start, recovered] of each fault: resource samples near them are not "quiet". */
  const faultWindows: Array<[number, number]> = [];
  for (const fault of schedule) {
    const wait = faultsStart + fault.atS * 1000 - Date.now();
    if (wait > 0) await sleep(wait);
    if (unexpected.length > 0) break;
    const startedAtS = (Date.now() - t0) / 1000;
    const faultStartedAt = Date.now();
    say(`fault: ${fault.kind}${fault.forS ? ` for ${fault.forS} s` : ''}`);
    const recovery: Record<string, number | null> = {};
    let detail: unknown;
    if (fault.kind === 'sse-drop') {
      const cut = proxy.cut(fault.forS * 1000);
      await sleep(fault.forS * 1000);
      const end = Date.now();
      const h = current();
      const [s, r] = await Promise.all([streamBack(h, h.head, end), readyBack(end)]);
      recovery.streamMs = s;
      recovery.readyMs = r;
      detail = { connectionsCut: cut };
    } else if (fault.kind === 'gateway-pause') {
      const from = Date.now();
      gatewayStopped = true;
      signal(gateway, 'SIGSTOP');
      await sleep(fault.forS * 1000);
      signal(gateway, 'SIGCONT');
      gatewayStopped = false;
      const end = Date.now();
      pauses.push([from, end]);
      const h = current();
      // Caught up: the probe sees a frame above the engine's head at SIGCONT.
      const [s, r] = await Promise.all([streamBack(h, h.head, end), readyBack(end)]);
      recovery.streamCaughtUpMs = s;
      recovery.readyMs = r;
    } else if (fault.kind === 'db-stall' || fault.kind === 'db-freeze') {
      // Stall: the database process stopped. Freeze: its host vanished behind a middlebox (the
      // gateway's open connections go silent for good, new ones pass again after the fault).
      if (fault.kind === 'db-stall') signal(db, 'SIGSTOP');
      else detail = { connectionsFrozen: dbProxy.freeze(fault.forS * 1000) };
      await sleep(fault.forS * 1000);
      if (fault.kind === 'db-stall') signal(db, 'SIGCONT');
      const end = Date.now();
      recovery.readyMs = await readyBack(end);
      const t = Date.now();
      for (;;) {
        const res = await request(`${gatewayUrl}/v1/fills?limit=1`, { headersTimeout: HANG_MS, bodyTimeout: HANG_MS }).catch(() => null);
        await res?.body.dump();
        if (res?.statusCode === 200 || Date.now() - t > 60_000) {
          recovery.restMs = res?.statusCode === 200 ? Date.now() - end : null;
          break;
        }
        await sleep(100);
      }
    } else if (fault.kind === 'engine-trickle') {
      // The engine sends its answers a byte every 500 ms: proxied calls must end at ENGINE_TIMEOUT_MS
      // with 504 and free their connections; the SSE stream lags, then catches up.
      const open = proxy.trickle(fault.forS * 1000, 500);
      const probe = request(`${gatewayUrl}/v1/orderbook?market=BTC-PERP&depth=5`, { headersTimeout: HANG_MS, bodyTimeout: HANG_MS }).then(
        async (res) => ({ status: res.statusCode, code: ((await res.body.json().catch(() => ({}))) as { code?: string }).code }),
        () => ({ status: 0, code: 'no answer' }),
      );
      await sleep(fault.forS * 1000);
      const end = Date.now();
      const duringFault = await probe;
      const h = current();
      const [s, r, b] = await Promise.all([streamBack(h, h.head, end), readyBack(end), bookBack(end)]);
      recovery.streamMs = s;
      recovery.readyMs = r;
      recovery.bookMs = b;
      detail = { connectionsOpen: open, bookDuringFault: duringFault };
      if (duringFault.status !== 504) faultFailures.push(`engine-trickle: an order book read during the fault answered ${duringFault.status} ${duringFault.code ?? ''}, not 504 engine_timeout`);
    } else if (fault.kind === 'sse-endless-line') {
      // The engine's event stream turns into one line that never ends: the bridge must drop it past
      // SSE_MAX_EVENT_BYTES (counted), reconnect and lose nothing; memory stays flat.
      const before = await oversizedDrops();
      const streams = proxy.endlessLine(fault.forS * 1000);
      await sleep(fault.forS * 1000);
      const end = Date.now();
      const h = current();
      const [s, r] = await Promise.all([streamBack(h, h.head, end), readyBack(end)]);
      recovery.streamMs = s;
      recovery.readyMs = r;
      const drops = (await oversizedDrops()) - before;
      detail = { streamsCut: streams, oversizedDrops: drops };
      if (streams > 0 && drops < 1) faultFailures.push('sse-endless-line: the gateway never dropped the endless line (bff_sse_oversized_total did not move)');
    } else if (fault.kind === 'reconnect-storm') {
      const storm: StormResult = await reconnectStorm(wsUrl, opts.stormClients, current().head, 30_000);
      recovery.allSubscribedMs = storm.allInMs;
      detail = storm;
    } else if (fault.kind === 'engine-restart') {
      await simulator.stop();
      await engine.kill();
      // The soak's reader keeps what the engine sent before it died (as the gateway's SSE does), then
      // stops before the new engine is up.
      await sleep(Math.min(500, fault.forS * 1000));
      follower.stop();
      await sleep(Math.max(0, fault.forS * 1000 - 500));
      engine = svc('engine', 'sandbox/engine/main.ts', engineEnv);
      await waitFor('engine restart', () => httpOk(`${engineUrl}/healthz`), 30_000, abort);
      const up = Date.now();
      const next = new EngineHistory(histories.length);
      histories.push(next);
      follower = followEngine(engineUrl, TOKEN, next);
      simulator = svc('simulator', 'sandbox/simulator/main.ts', simEnv);
      soakSession = await authorizeSession(engineUrl);
      const [s, r] = await Promise.all([streamBack(next, 0, up), readyBack(up)]);
      recovery.streamMs = s;
      recovery.readyMs = r;
    }
    say(`  recovered: ${JSON.stringify(recovery)}`);
    faultWindows.push([faultStartedAt, Date.now()]);
    outcomes.push({ ...fault, startedAtS, recovery, ...(detail ? { detail } : {}) });
  }

  // 9. Quiet tail, then stop the load and let every client catch up with the engine's head.
  const endAt = faultsStart + opts.durationS * 1000;
  if (Date.now() < endAt) await sleep(endAt - Date.now());
  say('stopping the simulator; waiting for the clients to catch up');
  for (const c of clients) c.calm();
  await simulator.stop();
  await sleep(3000);
  const endHead = new Map(histories.map((h) => [h.index, h.head]));
  await sleep(5000);
  for (const c of clients) c.markOpenAtEnd();
  for (const c of clients) c.stop();
  bookClient.stop();
  // The books kept from events never differed from the engine's (each repair is a defect).
  const book = await bookFigures(gatewayUrl, bookClient);
  await rest.stop();
  clearInterval(sampler);
  follower.stop();
  for (const s of [...services].reverse()) await s.stop();
  await proxy.close();
  await dbProxy.close();
  const runS = (Date.now() - t0) / 1000;

  // 10. Checks.
  const failures: string[] = [...unexpected, ...faultFailures];
  for (const h of histories) failures.push(...h.problems);
  const verdicts: SegmentVerdict[] = [];
  for (const c of clients) {
    for (const seg of c.segments) {
      const v = verifySegment(seg, c.spec, histories, endHead);
      if (v) verdicts.push(v);
    }
  }
  const perClient = clients.map((c) => {
    const vs = verdicts.filter((v) => v.client === c.spec.name);
    const sum = (k: 'received' | 'expected' | 'missing' | 'duplicated' | 'foreign' | 'outOfOrder'): number => vs.reduce((a, v) => a + v[k], 0);
    return {
      client: c.spec.name,
      connects: c.connects,
      segments: vs.length,
      compared: sum('received'),
      expected: sum('expected'),
      missing: sum('missing'),
      duplicated: sum('duplicated'),
      foreign: sum('foreign'),
      outOfOrder: sum('outOfOrder'),
      domainProblems: vs.reduce((a, v) => a + v.domainProblems.length, 0),
      frames: c.frames,
      snapshotFrames: c.snapshotFrames,
      heartbeats: c.heartbeats,
      heartbeatAsked: c.spec.extra?.heartbeat !== undefined,
      snapshotOff: c.spec.extra?.snapshot === 'false',
      epochSeen: c.sawEpoch,
      legFrames: vs.reduce((a, v) => a + v.legFrames, 0),
      announced: c.announced,
      closes: Object.fromEntries(c.closes),
      refusals: Object.fromEntries(c.refusals),
      examples: vs.filter(failed).flatMap((v) => [...v.examples.slice(0, 4), ...v.domainProblems.slice(0, 4)].map((e) => `[${v.why} ${v.from}..${v.to} h${v.history}] ${e}`)).slice(0, 12),
    };
  });
  for (const p of perClient) {
    if (p.missing + p.duplicated + p.foreign + p.outOfOrder + p.domainProblems > 0) {
      failures.push(`stream client ${p.client}: ${p.missing} missing, ${p.duplicated} duplicated, ${p.foreign} not the engine's, ${p.outOfOrder} out of order, ${p.domainProblems} domain-frame problems`);
    }
    if (p.compared === 0) failures.push(`stream client ${p.client} received no compared frame`);
    if (p.heartbeatAsked && p.epochSeen && p.heartbeats === 0) failures.push(`stream client ${p.client} asked for heartbeats and got none`);
    if (p.snapshotOff && p.snapshotFrames > 0) failures.push(`stream client ${p.client} asked snapshot=false and got ${p.snapshotFrames} snapshot frames`);
  }
  for (const o of outcomes) {
    const storm = o.detail as StormResult | undefined;
    if (o.kind === 'reconnect-storm' && storm) {
      if (storm.subscribed < storm.clients) failures.push(`reconnect storm at ${o.startedAtS.toFixed(0)} s: ${storm.clients - storm.subscribed} of ${storm.clients} clients not subscribed`);
      if (storm.resumersClosed4008 > 0) failures.push(`reconnect storm: ${storm.resumersClosed4008} replaying clients closed 4008 (slow consumer) while reading at full speed`);
    }
    for (const [k, v] of Object.entries(o.recovery)) if (v === null) failures.push(`${o.kind} at ${o.startedAtS.toFixed(0)} s: ${k} did not recover within 60 s`);
  }
  if (book.divergences !== 0) failures.push(`order book: bff_book_divergences_total is ${book.divergences}, not 0 (the book kept from events differed from the engine's and was repaired)`);
  if (book.seeds.orders === 0) failures.push('order book: no book was seeded order by order from the mirror (bff_book_seeds_total{source="orders"} is 0)');
  if (rest.bad.length > 0) failures.push(`REST: ${rest.bad.length} answers outside 2xx/4xx/503/504 (first: ${JSON.stringify(rest.bad.slice(0, 3))})`);
  if (rest.slow.length > 0) failures.push(`REST: ${rest.slow.length} answers slower than ${HANG_MS} ms (first: ${JSON.stringify(rest.slow.slice(0, 3))})`);

  // Resources: slopes after the first fifth (warm-up: caches and the replay history filling), over
  // every sample and over the quiet ones (none during a fault or in the 20 s after its recovery:
  // a storm's 200 connections or a replay are a spike, not a trend). The quiet slopes are judged.
  const warm = samples.filter((s) => s.t >= samples[0]!.t + (samples.at(-1)!.t - samples[0]!.t) / 5);
  const quiet = warm.filter((s) => !faultWindows.some(([a, b]) => s.t >= a && s.t <= b + 20_000));
  const perMinOf = (set: Sample[], pick: (s: Sample) => number | null): number | null => {
    const pts = set.filter((s) => pick(s) !== null).map((s): [number, number] => [(s.t - t0) / 60_000, pick(s)!]);
    return pts.length < 5 ? null : slope(pts);
  };
  const perMin = (pick: (s: Sample) => number | null): number | null => perMinOf(warm, pick);
  const quietPerMin = (pick: (s: Sample) => number | null): number | null => perMinOf(quiet, pick);
  const MiB = 1024 * 1024;
  /** null: too few samples for a slope (a short run has hardly any quiet ones). */
  const mib = (v: number | null): number | null => (v === null ? null : v / MiB);
  const kib = (v: number | null): number | null => (v === null ? null : Math.round(v / 1024));
  const f3 = (v: number | null): string => (v === null ? 'n/a' : v.toFixed(3));
  const resources = {
    samples: samples.length,
    quietSamples: quiet.length,
    rssMiB: { first: samples[0]!.rss / MiB, max: Math.max(...samples.map((s) => s.rss)) / MiB, last: samples.at(-1)!.rss / MiB, slopeMiBPerMin: mib(perMin((s) => s.rss)), quietSlopeMiBPerMin: mib(quietPerMin((s) => s.rss)) },
    heapMiB: { first: (samples.find((s) => s.heap !== null)?.heap ?? 0) / MiB, max: Math.max(...samples.map((s) => s.heap ?? 0)) / MiB, last: (samples.at(-1)!.heap ?? 0) / MiB, slopeMiBPerMin: mib(perMin((s) => s.heap)), quietSlopeMiBPerMin: mib(quietPerMin((s) => s.heap)) },
    heapTotalMiB: { first: (samples.find((s) => s.heapTotal !== null)?.heapTotal ?? 0) / MiB, max: Math.max(...samples.map((s) => s.heapTotal ?? 0)) / MiB, last: (samples.at(-1)!.heapTotal ?? 0) / MiB, slopeMiBPerMin: mib(perMin((s) => s.heapTotal)), quietSlopeMiBPerMin: mib(quietPerMin((s) => s.heapTotal)) },
    externalMiB: { first: (samples.find((s) => s.external !== null)?.external ?? 0) / MiB, max: Math.max(...samples.map((s) => s.external ?? 0)) / MiB, last: (samples.at(-1)!.external ?? 0) / MiB, slopeMiBPerMin: mib(perMin((s) => s.external)), quietSlopeMiBPerMin: mib(quietPerMin((s) => s.external)) },
    fds: { first: samples[0]!.fds, max: Math.max(...samples.map((s) => s.fds)), last: samples.at(-1)!.fds, slopePerMin: perMin((s) => s.fds), quietSlopePerMin: quietPerMin((s) => s.fds) },
  };
  // Judged on runs of 5 minutes or more; a shorter run is mostly warm-up and faults.
  const judged = opts.durationS >= 300;
  if (judged) {
    // RSS keeps the high-water mark of the spikes (the allocator rarely gives memory back): a looser bound.
    if ((resources.rssMiB.quietSlopeMiBPerMin ?? 0) > 4) failures.push(`gateway RSS grows ${f3(resources.rssMiB.quietSlopeMiBPerMin)} MiB/min (quiet samples)`);
    if ((resources.heapMiB.quietSlopeMiBPerMin ?? 0) > 1) failures.push(`gateway heap grows ${f3(resources.heapMiB.quietSlopeMiBPerMin)} MiB/min (quiet samples)`);
    if ((resources.fds.quietSlopePerMin ?? 0) > 1) failures.push(`gateway open fds grow ${f3(resources.fds.quietSlopePerMin)}/min (quiet samples)`);
  }

  const sorted = [...rest.latencies].sort((a, b) => a - b);
  const pct = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
  const result = {
    mode: opts.short ? 'short' : 'default',
    runS,
    rate: opts.rate,
    gatewayNodeFlags,
    deadlineMs: DEADLINE_MS,
    hangMs: HANG_MS,
    engineHistories: histories.map((h) => ({ index: h.index, events: h.head })),
    clients: perClient,
    rest: { requests: rest.requests, statuses: Object.fromEntries(rest.statuses), p50Ms: pct(50), p99Ms: pct(99), maxMs: sorted.at(-1) ?? 0, bad: rest.bad.length, resetsAcrossPause: rest.resetsAcrossPause, overDeadline: rest.slow.length, slowest: rest.slowest.map((f) => ({ ...f, atS: (f.at - t0) / 1000 })) },
    faults: outcomes,
    book,
    resources: {
      ...resources,
      judged,
      seriesColumns: ['s', 'rssKiB', 'heapUsedKiB', 'fds', 'heapTotalKiB', 'externalKiB'],
      series: samples.map((s) => [Math.round((s.t - t0) / 1000), Math.round(s.rss / 1024), kib(s.heap), s.fds, kib(s.heapTotal), kib(s.external)]),
      // Committed KiB of each V8 heap space: which one holds a heap total that does not come down.
      spaces: samples.map((s) => [Math.round((s.t - t0) / 1000), s.spaces && Object.fromEntries(Object.entries(s.spaces).map(([k, v]) => [k, Math.round(v / 1024)]))]),
    },
    failures,
  };
  writeFileSync(join(logDir, 'result.json'), `${JSON.stringify(result, null, 2)}\n`);
  const markdown = renderMarkdown(result, new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC', machine());
  writeFileSync(join(logDir, 'result.md'), `${markdown}\n`);
  if (opts.writeDocs) {
    writeDocsBlock(join(root, 'docs/reliability.md'), markdown);
    say('wrote the figures into docs/reliability.md');
  }

  say(`run: ${runS.toFixed(0)} s, engine histories ${histories.map((h) => `${h.index}: ${h.head} events`).join(', ')}`);
  for (const p of perClient) {
    say(`client ${p.client.padEnd(13)} connects ${p.connects}, segments ${p.segments}, compared ${p.compared}/${p.expected} expected, missing ${p.missing}, dup ${p.duplicated}, foreign ${p.foreign}, order ${p.outOfOrder}, domain ${p.domainProblems}; announced ${JSON.stringify(p.announced)}; closes ${JSON.stringify(p.closes)}`);
    for (const e of p.examples) say(`    ${e}`);
  }
  say(`order book: ${book.divergences ?? 'n/a'} divergences repaired, seeds ${JSON.stringify(book.seeds)}; the delta client: ${JSON.stringify(book.client)}`);
  say(`REST: ${result.rest.requests} requests ${JSON.stringify(result.rest.statuses)}, p50 ${result.rest.p50Ms} ms, p99 ${result.rest.p99Ms} ms, max ${result.rest.maxMs} ms (hang limit ${HANG_MS} ms)`);
  say(`gateway RSS ${resources.rssMiB.first.toFixed(0)} → ${resources.rssMiB.last.toFixed(0)} MiB (max ${resources.rssMiB.max.toFixed(0)}), slope ${f3(resources.rssMiB.slopeMiBPerMin)} MiB/min (quiet ${f3(resources.rssMiB.quietSlopeMiBPerMin)}); heap ${resources.heapMiB.first.toFixed(0)} → ${resources.heapMiB.last.toFixed(0)} MiB, slope ${f3(resources.heapMiB.slopeMiBPerMin)} MiB/min (quiet ${f3(resources.heapMiB.quietSlopeMiBPerMin)}); heap total ${resources.heapTotalMiB.first.toFixed(0)} → ${resources.heapTotalMiB.last.toFixed(0)} MiB (max ${resources.heapTotalMiB.max.toFixed(0)}); external ${resources.externalMiB.first.toFixed(0)} → ${resources.externalMiB.last.toFixed(0)} MiB (max ${resources.externalMiB.max.toFixed(0)}); fds ${resources.fds.first} → ${resources.fds.last} (max ${resources.fds.max}), slope ${f3(resources.fds.slopePerMin)}/min (quiet ${f3(resources.fds.quietSlopePerMin)})${judged ? '' : ' (not judged: run shorter than 5 min)'}`);
  for (const o of outcomes) say(`fault ${o.kind.padEnd(15)} at ${o.startedAtS.toFixed(0).padStart(4)} s for ${o.forS} s: ${JSON.stringify(o.recovery)}`);
  say(`results: ${join(logDir, 'result.json')}`);
  if (failures.length === 0) {
    say('PASS: every check held');
    return 0;
  }
  for (const f of failures) say(`FAIL ${f}`);
  return 1;
}

/** The gateway's book counters (its process lives the whole run: a pause stops it, never restarts it) and the delta client's counts. */
async function bookFigures(gatewayUrl: string, client: BookClient): Promise<{ divergences: number | null; seeds: { orders: number; levels: number }; client: BookClient['counts'] }> {
  const text = await request(`${gatewayUrl}/metrics`, { headersTimeout: 10_000, bodyTimeout: 10_000 }).then((r) => r.body.text(), () => null);
  const sum = (name: string, filter = ''): number =>
    (text ?? '').split('\n').filter((l) => l.startsWith(`${name}{`) && l.includes(filter)).reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
  return {
    divergences: text === null ? null : sum('bff_book_divergences_total'),
    seeds: { orders: sum('bff_book_seeds_total', 'source="orders"'), levels: sum('bff_book_seeds_total', 'source="levels"') },
    client: { ...client.counts },
  };
}

let exiting = false;
const cleanup = async (code: number): Promise<void> => {
  if (exiting) return;
  exiting = true;
  for (const s of [...services].reverse()) await s.stop(3000).catch(() => {});
  process.exit(code);
};
process.on('SIGINT', () => void cleanup(130));
process.on('SIGTERM', () => void cleanup(143));
main().then((code) => cleanup(code), (err: Error) => {
  say(`FAIL soak aborted: ${err.stack ?? err.message}`);
  void cleanup(1);
});
