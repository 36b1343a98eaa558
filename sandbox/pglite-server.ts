// Embedded PostgreSQL: PGlite served over its socket server, so every client (the gateway, the
// reference indexer, tests) talks to it with its ordinary PostgreSQL driver. Used by the local
// stack and by the tests when no real PostgreSQL server is reachable.
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts PGlite (in memory, or persisted in `dataDir`) behind a socket server on loopback.
 * PGlite runs one query at a time and does not deliver LISTEN/NOTIFY across connections;
 * `maxConnections` is raised so pooled clients can connect at all.
 */
export async function startEmbeddedPostgres(
  options: { port?: number; dataDir?: string; maxConnections?: number; holdTimeoutMs?: number } = {},
): Promise<EmbeddedPostgres> {
  const db = options.dataDir ? new PGlite(options.dataDir) : new PGlite();
  await db.waitReady;
  keepExchangesTogether(db);
  const port = options.port ?? 0;
  const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections: options.maxConnections ?? 64 });
  boundHolds(db, server, options.holdTimeoutMs ?? HOLD_TIMEOUT_MS);
  await server.start();
  const conn = server.getServerConn(); // "127.0.0.1:PORT"
  const actualPort = Number(conn.split(':').pop());
  return {
    url: `postgres://postgres@127.0.0.1:${actualPort}/postgres`,
    port: actualPort,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/** How long one connection may hold the server silent inside an exchange or a transaction. */
export const HOLD_TIMEOUT_MS = 5_000;

/**
 * The server is the database's only lane: while one connection holds it (an open extended-protocol
 * exchange, below, or a transaction) every other connection, the gateway and the indexer among them,
 * waits. A client that stops in the middle (Parse sent, Sync never; BEGIN and then nothing) would
 * freeze the whole stack until its socket closed. So the holder may be silent for at most
 * `holdMs` between two of its messages: past that it is disconnected, its transaction or exchange
 * rolled back (the server's own handling of a client that goes away), and the others proceed.
 * (The socket server keeps its handlers and queue private; they are reached here by name.)
 */
function boundHolds(db: PGlite, server: PGLiteSocketServer, holdMs: number): void {
  const internals = server as unknown as {
    handlers: Set<{ handlerId: number; detach(close?: boolean): Promise<unknown> }>;
    queryQueue: { lastHandlerId: number | null };
  };
  let timer: NodeJS.Timeout | null = null;
  const dropHolder = (): void => {
    timer = null;
    const holder = internals.queryQueue.lastHandlerId;
    for (const handler of internals.handlers) {
      if (handler.handlerId !== holder) continue;
      console.warn(`embedded PostgreSQL: connection #${holder} held the database silent for ${holdMs} ms inside an exchange or transaction: disconnected`);
      internals.handlers.delete(handler);
      void handler.detach(true);
    }
  };
  const execProtocolRawStream = db.execProtocolRawStream.bind(db);
  db.execProtocolRawStream = async (message, options) => {
    if (timer) clearTimeout(timer);
    timer = null;
    try {
      return await execProtocolRawStream(message, options);
    } finally {
      // Only the holder's messages run while it holds the server: the next one re-arms this.
      if (db.isInTransaction()) timer = setTimeout(dropHolder, holdMs).unref();
    }
  };
}

/** Extended-protocol messages after which the sending connection's exchange is still open. */
const OPENS_EXCHANGE = new Set([0x50 /* P Parse */, 0x42 /* B Bind */, 0x44 /* D Describe */, 0x45 /* E Execute */, 0x43 /* C Close */, 0x48 /* H Flush */]);

/**
 * The socket server runs one protocol message at a time from whichever connection sent it, and
 * keeps a connection's messages together only inside an explicit transaction (its queue asks
 * `isInTransaction()`). An extended-protocol exchange (Parse, Bind, Describe, Execute … Sync) is
 * several messages sharing the one backend's unnamed statement and portal, so another
 * connection's message landing inside it breaks it: a simple query destroys the unnamed statement
 * ("unnamed prepared statement does not exist", which the reference indexer with
 * `prepare: false` hit while the stack polled the database), and another Bind would replace the
 * unnamed portal. Reporting "in a transaction" from the first message of an exchange until its Sync
 * (or a simple query) makes the server's own rule keep the exchange together. A client that
 * disconnects mid-exchange is handled as for a transaction: the server runs `ROLLBACK` through
 * `exec` and moves on, so `exec` ends the open exchange first.
 * Limitation: the other connections wait while an exchange is open, so a client must not wait on
 * another connection in the middle of one (a postgres.js `cursor()` whose callback queries through
 * the pool would wait forever here). Nothing in this project does; PostgreSQL has no such limit.
 * (COPY … FROM STDIN is not grouped either, but PGlite does not serve it over the socket at all.)
 * Measured with 6 concurrent clients (unnamed, named and simple-protocol queries, writes) for 4 s:
 * 1 991 of 15 930 queries failed before this, none of 18 376 after (test/sandbox/stack).
 */
function keepExchangesTogether(db: PGlite): void {
  let open = false;
  const isInTransaction = db.isInTransaction.bind(db);
  const execProtocolRawStream = db.execProtocolRawStream.bind(db);
  const exec = db.exec.bind(db);
  db.isInTransaction = () => open || isInTransaction();
  db.execProtocolRawStream = async (message, options) => {
    try {
      return await execProtocolRawStream(message, options);
    } finally {
      open = OPENS_EXCHANGE.has(message[0]!);
    }
  };
  db.exec = (query, options) => {
    open = false;
    return exec(query, options);
  };
}
