// Notices a database connection whose peer stopped answering (docs/reliability.md "Database
// connections"). postgres.js has no client-side query timeout: a query written to a connection whose
// peer went silent without closing it (a host that vanished, a frozen proxy or NAT, a half-open TCP
// connection) waits for ever. The read's deadline answers the client, but the query keeps its
// connection, and the pool pipelines new queries behind it: a pool whose every connection is such
// a one answers nothing again, while the database itself is fine. TCP keepalive does not help while
// something on the path still acknowledges, nor while a write is unacknowledged (that would be
// TCP_USER_TIMEOUT, which neither Node's sockets nor postgres.js can set).
//
// The server answers every statement within its statement_timeout (its result or error 57014), so
// a connection that owes an answer and has received nothing for statement_timeout + a margin is
// dead: it is destroyed, its queries fail at once (503), and the pool opens a fresh connection.
// "Owes an answer": something was written since the server last became idle; the server ends every
// exchange with ReadyForQuery (`Z`, length 5, status), the last bytes it sends before it waits, so
// a connection whose received bytes end with one has nothing outstanding. With pipelining several
// queries could be outstanding behind one ReadyForQuery, so the pool does not pipeline
// (max_pipeline 0, src/db/database.ts). The check reads plaintext bytes: with TLS the gateway keeps
// postgres.js's own socket (keepalive only).
import { Socket } from 'node:net';
import { systemClock, type Clock, type ClockTimer } from '../contracts/clock.js';

export interface WatchdogOptions {
  /** Silence allowed while an answer is owed: statement timeout + margin. */
  answerTimeoutMs: number;
  /** Told when a connection is destroyed for silence. */
  onDead?: (silentMs: number) => void;
  /** The silence is measured and timed on this clock (default systemClock). */
  clock?: Clock;
}

/** ReadyForQuery: 'Z', int32 length 5, then the transaction status byte. */
const READY_FOR_QUERY = Buffer.from([0x5a, 0, 0, 0, 5]);

function endsIdle(tail: Buffer): boolean {
  return tail.length === 6 && tail.subarray(0, 5).equals(READY_FOR_QUERY);
}

export class DeadPeerError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(ms: number) {
    super(`the database connection gave no answer for ${ms} ms: closed`);
  }
}

/** Watches one socket: arms on a write while idle, re-arms on every received byte, disarms at ReadyForQuery. */
export function watchAnswers(socket: Socket, options: WatchdogOptions): void {
  let tail = Buffer.alloc(0);
  let owed = false;
  const clock = options.clock ?? systemClock;
  let timer: ClockTimer | null = null;
  let since = 0;
  const arm = (): void => {
    if (timer) clock.clearTimeout(timer);
    since = clock.now();
    timer = clock.setTimeout(() => {
      options.onDead?.(clock.now() - since);
      socket.destroy(new DeadPeerError(options.answerTimeoutMs));
    }, options.answerTimeoutMs);
  };
  const disarm = (): void => {
    if (timer) clock.clearTimeout(timer);
    timer = null;
  };
  const write = socket.write;
  socket.write = function (this: Socket, ...args: unknown[]) {
    if (!owed) {
      owed = true;
      arm();
    }
    return (write as (...a: unknown[]) => boolean).apply(this, args);
  } as Socket['write'];
  socket.on('data', (chunk: Buffer) => {
    tail = Buffer.concat([tail, chunk.subarray(Math.max(0, chunk.length - 6))]).subarray(-6);
    if (!owed) return;
    if (endsIdle(tail)) {
      owed = false;
      disarm();
    } else arm();
  });
  socket.once('close', disarm);
}

/**
 * postgres.js's `socket` option: a TCP socket to the first host, connected by the driver's own
 * timers (its connect timeout, its keepalive), watched by `watchAnswers`. Node queues the startup
 * message the driver writes at once until the connection is made.
 */
export function watchedSocket(options: WatchdogOptions): (o: { host: string[]; port: number[]; path?: string | false }) => Socket {
  return (o) => {
    const socket = new Socket();
    if (o.path) socket.connect(o.path);
    else socket.connect(o.port[0]!, o.host[0]!);
    // After connect(): it puts Socket.prototype.write back on the instance.
    watchAnswers(socket, options);
    return socket;
  };
}
