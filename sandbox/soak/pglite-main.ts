// `tsx sandbox/soak/pglite-main.ts`: embedded PostgreSQL (PGlite, in memory) as its own process, so
// the soak can stall the database with SIGSTOP/SIGCONT without stopping anything else. (The stack of
// `npm start` runs it inside the stack process, where a stall would stop the stack itself.)
// Env: SOAK_DB_PORT (0 = any free port). Prints one line `DB_READY <url>` when it accepts connections.
import { startEmbeddedPostgres } from '../pglite-server.js';

const db = await startEmbeddedPostgres({ port: Number(process.env.SOAK_DB_PORT ?? 0) });
process.stdout.write(`DB_READY ${db.url}\n`);
const shutdown = (): void => void db.stop().finally(() => process.exit(0));
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
