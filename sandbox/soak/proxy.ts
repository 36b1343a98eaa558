// A TCP proxy in front of a service (the engine, the database), so the soak and the tests can break
// the gateway's connections without touching either process:
// - `cut(holdMs)` destroys every open connection and refuses new ones for `holdMs`;
// - `freeze(holdMs)` is the nastier fault of a vanished host behind a stateful middlebox: every open
//   connection stops forwarding in both directions but stays open (the gateway's writes are still
//   acknowledged), for good, and connections made during `holdMs` are accepted and never forwarded;
//   after `holdMs` new connections pass again. Frozen connections end when the gateway closes them.
// - `trickle(holdMs, everyMs)`: for `holdMs` the service's answers reach the gateway one byte every
//   `everyMs` (an engine that sends its headers and then a byte now and then); the rest follows at
//   once when the fault ends;
// - `endlessLine(holdMs)`: the open server-sent-events answers (Content-Type text/event-stream) are
//   cut, and every one opened during `holdMs` carries, after its headers, one `data:` line that never
//   ends instead of the service's bytes (in the answer's chunked framing), as fast as the gateway
//   reads it; at the end of the fault such connections are closed.
import { createServer, connect, type Socket } from 'node:net';

export interface CuttableProxy {
  port: number;
  cut(holdMs: number): number;
  /** Freezes every open connection for good and new ones for `holdMs`; answers how many were open. */
  freeze(holdMs: number): number;
  /** Trickles every answer for `holdMs`; answers how many connections were open. */
  trickle(holdMs: number, everyMs: number): number;
  /** Turns event streams into one endless line for `holdMs`; answers how many streams were open then. */
  endlessLine(holdMs: number): number;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  upstream: Socket;
  /** The answer is an event stream (seen in its headers). */
  sse: boolean;
  /** Answer bytes held back by a trickle. */
  held: Buffer[];
  ticker: NodeJS.Timeout | null;
  /** The event stream carries the endless line instead of the service's bytes. */
  flooding: boolean;
}

const FLOOD_CHUNK = 'x'.repeat(65_536);

export async function startProxy(targetPort: number): Promise<CuttableProxy> {
  const pairs = new Set<Pair>();
  let refuseUntil = 0;
  let freezeUntil = 0;
  let trickleUntil = 0;
  let trickleEveryMs = 200;
  let floodUntil = 0;
  const frozen = new Set<Socket>();
  const hold = (socket: Socket): void => {
    frozen.add(socket);
    socket.pause();
    socket.on('error', () => socket.destroy());
    socket.once('close', () => frozen.delete(socket));
  };
  const end = (pair: Pair): void => {
    if (pair.ticker) clearInterval(pair.ticker);
    pair.client.destroy();
    pair.upstream.destroy();
    pairs.delete(pair);
  };
  /** Sends the endless line on an event stream whose headers (`head`) were just passed on. */
  const flood = (pair: Pair, head: string): void => {
    pair.flooding = true;
    const { client } = pair;
    // In the answer's own framing, so the gateway's HTTP parser accepts every byte of it.
    const chunked = /\r\ntransfer-encoding:[^\r]*chunked/i.test(head);
    const frame = (text: string): string => (chunked ? `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n` : text);
    const chunk = frame(FLOOD_CHUNK);
    // As fast as the gateway reads: the next chunk when the last one has drained.
    const pump = (): void => {
      while (!client.destroyed && Date.now() < floodUntil) {
        if (!client.write(chunk)) return void client.once('drain', pump);
      }
    };
    client.write(frame('data: '));
    pump();
    // The stream was garbage: at the end of the fault the gateway reconnects to a sound one.
    setTimeout(() => end(pair), Math.max(0, floodUntil - Date.now())).unref();
  };
  /** Answer bytes toward the gateway: straight through, or held back by a trickle. */
  const deliver = (pair: Pair, chunk: Buffer): void => {
    if (!pair.sse && chunk.subarray(0, 2048).toString('latin1').toLowerCase().includes('content-type: text/event-stream')) {
      pair.sse = true;
      if (Date.now() < floodUntil) {
        const head = chunk.subarray(0, chunk.indexOf('\r\n\r\n') + 4);
        pair.client.write(head);
        return flood(pair, head.toString('latin1'));
      }
    }
    if (pair.flooding) return;
    if (Date.now() >= trickleUntil && pair.held.length === 0) return void pair.client.write(chunk);
    pair.held.push(chunk);
    pair.ticker ??= setInterval(() => {
      const rest = Buffer.concat(pair.held);
      if (Date.now() >= trickleUntil) {
        pair.held = [];
        clearInterval(pair.ticker!);
        pair.ticker = null;
        if (rest.length > 0) pair.client.write(rest);
        return;
      }
      if (rest.length === 0) return;
      pair.client.write(rest.subarray(0, 1));
      pair.held = [rest.subarray(1)];
    }, trickleEveryMs);
  };
  const server = createServer((client) => {
    if (Date.now() < refuseUntil) {
      client.destroy();
      return;
    }
    if (Date.now() < freezeUntil) return hold(client);
    const upstream = connect(targetPort, '127.0.0.1');
    const pair: Pair = { client, upstream, sse: false, held: [], ticker: null, flooding: false };
    pairs.add(pair);
    client.on('error', () => end(pair)).on('close', () => end(pair));
    upstream.on('error', () => end(pair)).on('close', () => end(pair));
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => deliver(pair, chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut(holdMs) {
      refuseUntil = Date.now() + holdMs;
      const n = pairs.size;
      for (const pair of [...pairs]) end(pair);
      return n;
    },
    freeze(holdMs) {
      freezeUntil = Date.now() + holdMs;
      const n = pairs.size;
      for (const pair of [...pairs]) {
        const { client, upstream } = pair;
        if (pair.ticker) clearInterval(pair.ticker);
        client.unpipe(upstream);
        upstream.removeAllListeners('data');
        pairs.delete(pair);
        // The client side stays open but silent; closing it (the gateway giving up) ends both.
        client.removeAllListeners('close').removeAllListeners('error');
        hold(client);
        client.once('close', () => upstream.destroy());
        // Nothing from the server gets through either, its close included.
        upstream.removeAllListeners('close').removeAllListeners('error').on('error', () => upstream.destroy());
        upstream.pause();
      }
      return n;
    },
    trickle(holdMs, everyMs) {
      trickleUntil = Date.now() + holdMs;
      trickleEveryMs = everyMs;
      return pairs.size;
    },
    endlessLine(holdMs) {
      floodUntil = Date.now() + holdMs;
      // Open streams are cut (the flood must start at a framing boundary): their reconnections,
      // and any stream opened until the end of the fault, carry the endless line.
      let n = 0;
      for (const pair of [...pairs]) {
        if (!pair.sse || pair.flooding) continue;
        n++;
        end(pair);
      }
      return n;
    },
    close() {
      for (const s of frozen) s.destroy();
      for (const pair of [...pairs]) end(pair);
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
