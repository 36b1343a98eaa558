/**
 * The hog of bench/read-fairness.ts, a process of its own (its client work must not share the
 * measuring process's event loop): `connections` keep-alive connections from `localAddress`, each
 * reading distinct pages of `/v1/events` (1 000 events each) in a loop for `ms`; prints the counts
 * of answers by status as one JSON line.
 * Usage: tsx bench/read-hog.ts <gatewayUrl> <localAddress> <connections> <ms> <maxSeq>
 */
import { Agent, request } from 'undici';

const [url, localAddress, connections, ms, maxSeq] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6])];
const agent = new Agent({ localAddress, connections, pipelining: 1 });
const counts: Record<string, number> = {};
const end = Date.now() + ms;
await Promise.all(
  Array.from({ length: connections }, async (_, i) => {
    for (let k = i; Date.now() < end; k += connections) {
      try {
        const r = await request(`${url}/v1/events?limit=1000&since=${(k * 997) % Math.max(1, maxSeq)}`, { dispatcher: agent });
        await r.body.arrayBuffer();
        counts[r.statusCode] = (counts[r.statusCode] ?? 0) + 1;
      } catch {
        counts.error = (counts.error ?? 0) + 1;
      }
    }
  }),
);
console.log(JSON.stringify(counts));
await agent.close();
