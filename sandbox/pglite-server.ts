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
export async function startEmbeddedPostgres(options: { port?: number; dataDir?: string; maxConnections?: number } = {}): Promise<EmbeddedPostgres> {
  const db = options.dataDir ? new PGlite(options.dataDir) : new PGlite();
  await db.waitReady;
  const port = options.port ?? 0;
  const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1', maxConnections: options.maxConnections ?? 64 });
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
