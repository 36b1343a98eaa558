// The victim of bench:isolation, in a process of its own: the attacks are driven by the bench's
// process (hundreds of sockets, thousands of requests), and a victim measured there waited for the
// bench's own event loop as much as for the gateway. Started by bench/isolation.ts with IPC; it
// makes its session, funds it and opens its deflate socket, says `ready`, then answers each
// `{ window: ms }` with the Sample of a window (orders and pings) of that length.
import { deflateSocket, http, sessionFor, victim, type Sample } from './isolation-shared.js';

const gatewayUrl = process.env.ISOLATION_GATEWAY_URL!;
const engineUrl = process.env.ISOLATION_ENGINE_URL!;
const token = process.env.ISOLATION_TOKEN!;

export type VictimMessage = { ready: true } | { sample: Sample } | { failed: string };

async function main(): Promise<void> {
  if (!process.send) throw new Error('isolation-victim: start it from bench/isolation.ts (IPC)');
  const send = (m: VictimMessage) => process.send!(m);
  const s = await sessionFor(gatewayUrl, 'isolation-victim');
  const funded = await http('127.0.0.1', `${engineUrl}/v1/admin/faucet`, 'POST', { 'content-type': 'application/json', authorization: `Bearer ${token}` }, JSON.stringify({ party: s.party, amount: '100000000' }));
  if (funded.status !== 200) throw new Error(`faucet: ${funded.status}`);
  const pinger = await deflateSocket(`${gatewayUrl.replace('http', 'ws')}/v1/stream`, '127.0.0.1');
  process.on('message', (m: { window?: number; stop?: true }) => {
    if (m.stop) {
      pinger.terminate();
      process.exit(0);
    }
    if (m.window !== undefined) victim(gatewayUrl, s, pinger, m.window).then((sample) => send({ sample }), (err: Error) => send({ failed: err.message }));
  });
  send({ ready: true });
}

main().catch((err: unknown) => {
  process.send?.({ failed: String(err) });
  process.exit(1);
});
