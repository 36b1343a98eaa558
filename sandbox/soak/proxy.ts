// A TCP proxy between the gateway and the engine, so the soak can cut the gateway's engine
// connections (its SSE stream above all) without touching either process: `cut(holdMs)` destroys
// every open connection and refuses new ones for `holdMs`.
import { createServer, connect, type Socket } from 'node:net';

export interface CuttableProxy {
  port: number;
  cut(holdMs: number): number;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<CuttableProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let refuseUntil = 0;
  const server = createServer((client) => {
    if (Date.now() < refuseUntil) {
      client.destroy();
      return;
    }
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
    close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
