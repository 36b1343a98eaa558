// The embedded database serves one connection at a time inside an exchange or transaction
// (sandbox/pglite-server.ts): a client that sends Parse and never Sync would hold it for ever. A raw
// PostgreSQL-protocol client does exactly that; the server drops it after the hold bound and the
// other connections' queries go through.
import { connect, type Socket } from 'node:net';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../../sandbox/pglite-server.js';

const HOLD_MS = 600;

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

function startup(): Buffer {
  const params = Buffer.from('user\0postgres\0database\0postgres\0\0', 'latin1');
  const out = Buffer.alloc(8);
  out.writeInt32BE(8 + params.length, 0);
  out.writeInt32BE(196608, 4); // protocol 3.0
  return Buffer.concat([out, params]);
}

/** Connects, completes the startup, sends Parse without Sync, and holds the socket. */
async function holdParse(port: number): Promise<{ socket: Socket; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  let received = Buffer.alloc(0);
  const ready = new Promise<void>((resolve) =>
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.includes(Buffer.from([0x5a, 0, 0, 0, 5]))) resolve(); // ReadyForQuery
    }),
  );
  socket.write(startup());
  await ready;
  socket.write(message('P', Buffer.from('\0SELECT 1\0\0\0', 'latin1'))); // unnamed statement, no parameter types
  return { socket, closed };
}

describe('embedded PostgreSQL: a held exchange', () => {
  let server: EmbeddedPostgres;
  let sql: postgres.Sql;
  beforeAll(async () => {
    server = await startEmbeddedPostgres({ holdTimeoutMs: HOLD_MS });
    sql = postgres(server.url, { max: 1, onnotice: () => {}, prepare: false });
    await sql`SELECT 1`;
  });
  afterAll(async () => {
    await sql.end({ timeout: 2 });
    await server.stop();
  });

  it('drops a connection that sent Parse and never Sync; the others proceed', async () => {
    const holder = await holdParse(server.port);
    const started = Date.now();
    const [row] = await sql<{ n: number }[]>`SELECT 41 + 1 AS n`;
    expect(row!.n).toBe(42);
    // The other query waited for the bound (the holder had the server), not for the holder to leave.
    expect(Date.now() - started).toBeGreaterThanOrEqual(HOLD_MS - 50);
    await holder.closed;
    // And the database is fine afterwards.
    expect((await sql<{ n: number }[]>`SELECT 7 AS n`)[0]!.n).toBe(7);
  });
});
