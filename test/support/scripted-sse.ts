// A scripted stand-in for the engine's admin SSE stream (and its /v1/markets and /v1/orderbook),
// over real HTTP on loopback. A test pushes exact events, drops connections, makes the engine
// answer 410 (retention), go silent, or write events out of order, and sees the Last-Event-ID
// each reconnection asked for.
import type { EngineEvent } from '../../src/contracts/engine-event.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './eventually.js';

/** What the scripted engine sends: the gateway's own engine event type. */
export type ScriptedEvent = EngineEvent;

export interface Book {
  seq: number;
  bids: Array<[string, string]>;
  asks: Array<[string, string]>;
}

export interface StreamConnection {
  lastEventId: string | undefined;
  authorization: string | undefined;
  status: number;
}

export interface ScriptedEngine {
  url: string;
  token: string;
  /** Every request to the stream route, in order. */
  connections: StreamConnection[];
  /** Appends to the log and writes to open streams (each stream sends only seqs above its cursor). */
  push(...events: ScriptedEvent[]): void;
  /** Writes an event to the open streams as is, without logging it (duplicates, gaps). */
  writeRaw(event: ScriptedEvent): void;
  /** Closes every open stream abruptly. */
  dropAll(): void;
  /** Streams currently open. */
  readonly open: number;
  /** Oldest seq still replayable; a Last-Event-ID older than that answers 410. */
  oldestSeq: number;
  /** When true, streams send nothing at all (no events, no heartbeats). */
  silent: boolean;
  /**
   * Starts a line that never ends on every open stream: `data: ` then this many bytes of `x`
   * every 5 ms, with no newline, until the stream closes or `endlessLine(0)` (new streams are normal).
   * `endlessBytes` counts what was written.
   */
  endlessLine(chunkBytes: number): void;
  readonly endlessBytes: number;
  heartbeatMs: number;
  /** Heartbeats (`: hb`) written so far, over every stream. */
  readonly heartbeats: number;
  markets: Array<{ symbol: string; status: string }>;
  /** When set, `GET /v1/markets` answers this HTTP status (an engine that cannot list its markets). */
  marketsFailStatus: number | null;
  /** When set, the stream route answers this HTTP status instead of streaming. */
  streamFailStatus: number | null;
  /** When set, `GET /healthz` answers this HTTP status (an engine still starting: its head unknown). */
  healthFailStatus: number | null;
  /**
   * When set, `GET /healthz` takes its head when asked and answers this many ms later (a slow or
   * trickling link: events may pass on the stream meanwhile). `healthRequests` counts the asks.
   */
  healthDelayMs: number;
  readonly healthRequests: number;
  /** Answers to `GET /healthz` written so far (a delayed one counts once it has gone). */
  readonly healthAnswers: number;
  /** The engine restarts with a new, empty history: the log is cleared (open streams are dropped). */
  reset(): void;
  books: Map<string, Book>;
  /** Requests to /v1/orderbook, as "market depth". */
  bookRequests: string[];
  /**
   * When set, `GET /v1/orderbook` answers once this settles (the book as it is then): a gateway
   * seeding a book from the engine's levels is held mid-seed for as long as a test needs.
   */
  booksHeld: Promise<void> | null;
  /** Answers routes the script does not know (e.g. the admin faucet); return false for 404. */
  handler: ((req: IncomingMessage, res: ServerResponse) => boolean) | null;
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** `eventually` (test/support/eventually.ts) with this file's older argument order. */
export async function waitFor(predicate: () => boolean, timeoutMs = 5_000, label = 'condition'): Promise<void> {
  await eventually(predicate, { timeoutMs, what: label });
}

function frame(e: ScriptedEvent): string {
  return `id: ${e.seq}\nevent: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`;
}

export async function startScriptedEngine(options: { token?: string; heartbeatMs?: number } = {}): Promise<ScriptedEngine> {
  const token = options.token ?? 'test-admin-token';
  const log: ScriptedEvent[] = [];
  const streams = new Map<ServerResponse, { cursor: number | null }>();

  const floods = new Set<NodeJS.Timeout>();
  let floodBytes = 0;
  let healthRequests = 0;
  let healthAnswers = 0;
  let heartbeats = 0;
  const writeTo = (res: ServerResponse, st: { cursor: number | null }): void => {
    if (engine.silent) return;
    let out = '';
    for (const e of log) {
      if (st.cursor === null || e.seq > st.cursor) {
        out += frame(e);
        st.cursor = e.seq;
      }
    }
    if (out) res.write(out);
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/v1/admin/events/stream') {
      const lastEventId = req.headers['last-event-id'] as string | undefined;
      const conn: StreamConnection = { lastEventId, authorization: req.headers.authorization, status: 200 };
      engine.connections.push(conn);
      if (engine.streamFailStatus !== null) {
        conn.status = engine.streamFailStatus;
        res.writeHead(engine.streamFailStatus, { 'content-type': 'application/json' }).end('{"error":"unavailable"}');
        return;
      }
      if (req.headers.authorization !== `Bearer ${token}`) {
        conn.status = 401;
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      const since = lastEventId !== undefined ? Number(lastEventId) : null;
      if (since !== null && since < engine.oldestSeq - 1) {
        conn.status = 410;
        res.writeHead(410, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'since before retention', oldestSeq: engine.oldestSeq }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      // Without Last-Event-ID: live only, from the head.
      const st = { cursor: since ?? (log.length ? log[log.length - 1]!.seq : 0) };
      streams.set(res, st);
      writeTo(res, st);
      const hb = setInterval(() => {
        if (engine.silent) return;
        res.write(': hb\n\n');
        heartbeats++;
      }, engine.heartbeatMs);
      res.on('close', () => {
        clearInterval(hb);
        streams.delete(res);
      });
      return;
    }
    if (url.pathname === '/v1/markets') {
      if (engine.marketsFailStatus !== null) {
        res.writeHead(engine.marketsFailStatus, { 'content-type': 'application/json' }).end('{"error":"unavailable"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ markets: engine.markets }));
      return;
    }
    if (url.pathname === '/v1/orderbook') {
      const market = url.searchParams.get('market') ?? '';
      const depth = Number(url.searchParams.get('depth') ?? 20);
      engine.bookRequests.push(`${market} ${depth}`);
      const answer = () => {
        const book = engine.books.get(market) ?? { seq: 0, bids: [], asks: [] };
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ market, seq: book.seq, depth, bids: book.bids.slice(0, depth), asks: book.asks.slice(0, depth) }));
      };
      if (engine.booksHeld) void engine.booksHeld.then(answer);
      else answer();
      return;
    }
    if (url.pathname === '/healthz') {
      if (engine.healthFailStatus !== null) {
        res.writeHead(engine.healthFailStatus, { 'content-type': 'application/json' }).end('{"error":"starting"}');
        return;
      }
      healthRequests++;
      const body = JSON.stringify({ ok: true, version: 'c879f7f', buildDate: '2026-08-01', maxSeq: log.at(-1)?.seq ?? 0 });
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        healthAnswers++;
      };
      if (engine.healthDelayMs > 0) setTimeout(answer, engine.healthDelayMs);
      else answer();
      return;
    }
    if (engine.handler?.(req, res)) return;
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
  };

  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const engine: ScriptedEngine = {
    url: `http://127.0.0.1:${port}`,
    token,
    connections: [],
    oldestSeq: 1,
    silent: false,
    heartbeatMs: options.heartbeatMs ?? 1_000,
    markets: [{ symbol: 'BTC-PERP', status: 'active' }],
    marketsFailStatus: null,
    streamFailStatus: null,
    healthFailStatus: null,
    healthDelayMs: 0,
    get healthAnswers() {
      return healthAnswers;
    },
    get healthRequests() {
      return healthRequests;
    },
    reset() {
      log.length = 0;
      engine.oldestSeq = 1;
      engine.dropAll();
    },
    books: new Map(),
    bookRequests: [],
    booksHeld: null,
    handler: null,
    push(...events) {
      log.push(...events);
      for (const [res, st] of streams) writeTo(res, st);
    },
    writeRaw(event) {
      for (const res of streams.keys()) res.write(frame(event));
    },
    endlessLine(chunkBytes: number) {
      for (const t of floods) clearInterval(t);
      floods.clear();
      if (chunkBytes <= 0) return;
      const chunk = 'x'.repeat(chunkBytes);
      for (const res of streams.keys()) {
        res.write('data: ');
        const t = setInterval(() => {
          if (res.destroyed) return void clearInterval(t);
          res.write(chunk);
          floodBytes += chunkBytes;
        }, 5);
        floods.add(t);
      }
    },
    get heartbeats() {
      return heartbeats;
    },
    get endlessBytes() {
      return floodBytes;
    },
    dropAll() {
      for (const res of streams.keys()) res.destroy();
      streams.clear();
    },
    get open() {
      return streams.size;
    },
    waitFor: (p, t) => waitFor(p, t),
    async close() {
      engine.endlessLine(0);
      engine.dropAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return engine;
}
