// postgres.js 3.4.9 writes a small query on the next tick (setImmediate) and, when the connection closed
// in between, wrote to a null socket: an uncaught TypeError that killed the process. A transaction hits
// it every time its server goes away mid-query (begin's ROLLBACK goes to the dead connection), which is
// what a PostgreSQL stopped under load does to the gateway's snapshot reads (ADR 0340, the driver patch
// in patches/). This server speaks just enough of the wire protocol to accept a connection, answer
// BEGIN, and close the connection on the next query, so the sequence is the same on every run.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';

function message(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const cstring = (s: string) => Buffer.from(`${s}\0`, 'latin1');

/** Accepts any startup, answers the first query (BEGIN, a simple query) and closes on the next one. */
function closingServer(): net.Server {
  return net.createServer((socket) => {
    let buffered = Buffer.alloc(0);
    let started = false;
    let syncs = 0;
    socket.on('error', () => {});
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      if (!started) {
        if (buffered.length < 4 || buffered.length < buffered.readInt32BE(0)) return;
        buffered = buffered.subarray(buffered.readInt32BE(0));
        started = true;
        socket.write(Buffer.concat([message('R', int32(0)), message('Z', Buffer.from('I'))]));
      }
      const out: Buffer[] = [];
      while (buffered.length >= 5 && buffered.length >= 1 + buffered.readInt32BE(1)) {
        const type = String.fromCharCode(buffered[0]!);
        const body = buffered.subarray(5, 1 + buffered.readInt32BE(1));
        buffered = buffered.subarray(1 + buffered.readInt32BE(1));
        if (syncs >= 1) {
          socket.destroy();
          return;
        }
        if (type === 'Q') {
          syncs += 1;
          out.push(message('C', cstring('BEGIN')), message('Z', Buffer.from('T')));
        } else if (type === 'P') out.push(message('1'));
        else if (type === 'B') out.push(message('2'));
        else if (type === 'D') out.push(...(body[0] === 0x53 ? [message('t', Buffer.from([0, 0])), message('n')] : [message('n')]));
        else if (type === 'E') out.push(message('C', cstring('BEGIN')));
        else if (type === 'S') {
          syncs += 1;
          out.push(message('Z', Buffer.from('T')));
        }
      }
      if (out.length) socket.write(Buffer.concat(out));
    });
  });
}

describe('the PostgreSQL driver when its connection closes inside a transaction', () => {
  const server = closingServer();
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => void uncaught.push(e);
  beforeAll(async () => {
    process.on('uncaughtException', onUncaught);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('rejects the transaction with CONNECTION_CLOSED and throws nothing outside it', async () => {
    const { port } = server.address() as net.AddressInfo;
    const sql = postgres({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', fetch_types: false, max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      const outcome = await sql
        .begin((tx) => tx`SELECT 1`)
        .then(() => 'resolved', (e: unknown) => (e as { code?: string }).code ?? String(e));
      // Deliberate: a few turns of the event loop (the driver's deferred write runs on the next one),
      // within which nothing may be thrown outside the transaction.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(outcome).toBe('CONNECTION_CLOSED');
      expect(uncaught.map(String)).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
