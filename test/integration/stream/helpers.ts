// Real WebSocket clients and a gateway wired to the scripted engine, for the stream tests.
// Every message a client receives is checked against the stream's TypeBox schemas.
import WebSocket from 'ws';
import { Value } from 'typebox/value';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { startScriptedEngine, waitFor, type ScriptedEngine, type ScriptedEvent } from '../../support/scripted-sse.js';
import type { TestDatabase } from '../../support/db.js';
import { tick } from '../../unit/projections/fixtures.js';
import { LiveRuntime } from '../../../src/live.js';
import type { Clock } from '../../../src/contracts/clock.js';
import { schemaFor } from '../../../src/stream/frame-kinds.js';

export interface Msg {
  kind: string;
  seq?: number;
  ts: string;
  market?: string;
  userParty?: string;
  party?: string;
  interval?: string;
  snapshot?: boolean;
  payload: Record<string, any>;
}

export interface TestClient {
  ws: WebSocket;
  messages: Msg[];
  /** Messages that are frames (not stream.* control messages). */
  frames(): Msg[];
  closed: Promise<{ code: number; reason: string }>;
  schemaErrors: string[];
  waitFor(predicate: (messages: Msg[]) => boolean, timeoutMs?: number): Promise<void>;
}

export function wsUrl(gatewayUrl: string, query = ''): string {
  return `${gatewayUrl.replace(/^http/, 'ws')}/v1/stream${query ? `?${query}` : ''}`;
}

export async function connect(gatewayUrl: string, query = ''): Promise<TestClient> {
  const ws = new WebSocket(wsUrl(gatewayUrl, query));
  const messages: Msg[] = [];
  const schemaErrors: string[] = [];
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as Msg;
    messages.push(m);
    const schema = schemaFor(m.kind);
    if (!schema) schemaErrors.push(`no schema for ${m.kind}`);
    else if (!Value.Check(schema, m as unknown)) {
      schemaErrors.push(`${m.kind}: ${JSON.stringify([...Value.Errors(schema, m as unknown)].slice(0, 2))}`);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  return {
    ws,
    messages,
    frames: () => messages.filter((m) => !m.kind.startsWith('stream.')),
    closed,
    schemaErrors,
    // 15 s: only a failing wait spends it, and a loaded CI machine has taken more than 5 s to deliver.
    waitFor: (p, t = 15_000) => waitFor(() => p(messages), t, 'stream messages'),
  };
}

/** The HTTP answer to a refused upgrade. */
export async function refused(gatewayUrl: string, query: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const ws = new WebSocket(wsUrl(gatewayUrl, query), { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => {
      ws.terminate();
      reject(new Error('upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.once('error', () => {});
  });
}

export interface Stack {
  engine: ScriptedEngine;
  gw: TestGateway;
  live: LiveRuntime;
  close(): Promise<void>;
}

/** The scripted engine + a listening gateway whose live runtime is started. */
export async function startStack(env: Record<string, string | undefined> = {}, opts: { engine?: ScriptedEngine; start?: boolean; clock?: Clock; random?: () => number } = {}): Promise<Stack> {
  const engine = opts.engine ?? (await startScriptedEngine());
  const gw = await startGateway(
    {
      ENGINE_BASE_URL: engine.url,
      ENGINE_ADMIN_TOKEN: engine.token,
      AUTH_DISABLED: 'true',
      WS_ORDERBOOK_POLL_MS: '60000',
      ...env,
    },
    // A VirtualClock: the gateway's timers (backoff, watchdogs, polls) run only as the test advances it.
    // `random`: the backoff's jitter, fixed by a test that counts attempts per window of that time.
    { listen: true, overrides: { ...(opts.clock ? { clock: opts.clock } : {}), ...(opts.random ? { random: opts.random } : {}) } },
  );
  const live = gw.deps.live!;
  if (opts.start ?? true) await live.start();
  return {
    engine,
    gw,
    live,
    async close() {
      await gw.close();
      await engine.close();
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Engine time of a scripted event: one second per seq from a fixed origin. */
export const ts = (seq: number) => new Date(Date.parse('2026-11-21T10:00:00.000Z') + seq * 1000).toISOString();
/** `engine.tick_start` events for seqs from..to. */
export const ticks = (from: number, to: number): ScriptedEvent[] => Array.from({ length: to - from + 1 }, (_, i) => tick(from + i, ts(from + i)));
export const seqs = (c: { frames(): Array<{ seq?: number }> }) => c.frames().map((f) => f.seq);

/** Writes events into the mirror's `events` table, as an indexer would. */
export async function insertEvents(db: TestDatabase, events: ScriptedEvent[]): Promise<void> {
  for (const e of events) {
    await db.sql`INSERT INTO events (seq, kind, ts, market, party, payload) VALUES (${e.seq}, ${e.kind}, ${e.ts}, ${e.market ?? null}, ${e.party ?? null}, ${db.sql.json(e.payload as never)})`;
  }
}

/**
 * Calls `step` (which publishes) every 20 ms until the gateway has closed `clients` slow consumers
 * (4008) in all, or `more()` says stop; true when they were. Loopback socket buffers take several
 * MiB before a paused client's queue at the gateway grows, so it may take many steps.
 */
export async function untilSlowClosed(gatewayUrl: string, clients: number, step: () => void, more: () => boolean): Promise<boolean> {
  const closedAll = `bff_ws_slow_client_closes_total ${clients}`;
  while (more()) {
    step();
    // Pacing: a step every 20 ms.
    await sleep(20);
    if ((await (await fetch(`${gatewayUrl}/metrics`)).text()).includes(closedAll)) return true;
  }
  return false;
}

/** The frames of the last seq a client received, as `kind` or `kind/interval`. */
export function lastEvent(c: Pick<TestClient, 'frames'>): string[] {
  const frames = c.frames();
  const last = frames.at(-1)?.seq;
  return frames.filter((f) => f.seq === last).map((f) => (f.interval ? `${f.kind}/${f.interval}` : f.kind));
}

/**
 * Holds `LOCK TABLE <table> IN ACCESS EXCLUSIVE MODE` in a transaction of its own until `release`:
 * the gateway's reads of that table wait (visible in pg_stat_activity, `waitingReads`). Not on
 * pglite (one embedded connection: the lock would block the test's own queries too).
 */
export async function lockTable(db: TestDatabase, table: 'positions' | 'events'): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holder = db.sql.begin(async (tx) => {
    await tx.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    locked();
    await released;
  });
  await Promise.race([isLocked, holder]);
  return {
    release: async () => {
      release();
      await holder;
    },
  };
}

/** Queries of this database (other than LOCK TABLE) waiting for a lock, whose text contains `like`: the gateway's reads held by `lockTable`. */
export async function waitingReads(db: TestDatabase, like: string): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query NOT ILIKE 'LOCK TABLE%' AND query LIKE ${'%' + like + '%'}`;
  return row!.n;
}

/**
 * Once the gateway has delivered the history up to `seq`, every frame it published for it has
 * reached `clients`: each one pings, and the pong comes after whatever was already written on its
 * socket. What a test checks after this is all that came, without a fixed wait for stragglers.
 */
export async function deliveredTo(s: Stack, seq: number, ...clients: TestClient[]): Promise<void> {
  await waitFor(() => (s.live.status().maxSeq ?? 0) >= seq, 10_000, `the gateway to deliver up to seq ${seq}`);
  await Promise.all(clients.map((c) => new Promise<void>((resolve) => {
    c.ws.once('pong', () => resolve());
    c.ws.ping();
  })));
}
