// A TCP proxy in front of a service (the engine, the database), so the soak and the tests can break
// the gateway's connections without touching either process:
// - `cut(holdMs)` destroys every open connection and refuses new ones for `holdMs`;
// - `freeze(holdMs)` is the nastier fault of a vanished host behind a stateful middlebox: every open
//   connection stops forwarding in both directions but stays open (the gateway's writes are still
//   acknowledged), for good, and connections made during `holdMs` are accepted and never forwarded;
//   after `holdMs` new connections pass again. Frozen connections end when the gateway closes them.
import { createServer, connect, type Socket } from 'node:net';

export interface CuttableProxy {
  port: number;
  cut(holdMs: number): number;
  /** Freezes every open connection for good and new ones for `holdMs`; answers how many were open. */
  freeze(holdMs: number): number;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<CuttableProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let refuseUntil = 0;
  let freezeUntil = 0;
  const frozen = new Set<Socket>();
  const hold = (socket: Socket): void => {
    frozen.add(socket);
    socket.pause();
    socket.on('error', () => socket.destroy());
    socket.once('close', () => frozen.delete(socket));
  };
  const server = createServer((client) => {
    if (Date.now() < refuseUntil) {
      client.destroy();
      return;
    }
    if (Date.now() < freezeUntil) return hold(client);
    const upstream = connect(targetPort, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    cut(holdMs) {
      refuseUntil = Date.now() + holdMs;
      const n = pairs.size;
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
      return n;
    },
    freeze(holdMs) {
      freezeUntil = Date.now() + holdMs;
      const n = pairs.size;
      for (const pair of pairs) {
        const [client, upstream] = pair;
        client.unpipe(upstream);
        upstream.unpipe(client);
        pairs.delete(pair);
        // The client side stays open but silent; closing it (the gateway giving up) ends both.
        hold(client);
        // Nothing from the server gets through either, its close included.
        upstream.removeAllListeners('close').removeAllListeners('error').on('error', () => upstream.destroy());
        upstream.pause();
        client.once('close', () => upstream.destroy());
      }
      return n;
    },
    close() {
      for (const s of frozen) s.destroy();
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
