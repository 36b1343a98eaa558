// What the desk's end-to-end tests share (test/e2e/desk/): a funded trader with a session through a
// gateway, and the party's non-terminal orders as the engine holds them (its admin route).
import { faucet, http } from '../sandbox/engine/helpers.js';
import type { RunningEngine } from '../../sandbox/engine/index.js';
import { GatewayClient, localParty } from '../../packages/client/src/index.js';

/** A client of the gateway at `url` with a session of a new party, funded by the engine's faucet. */
export async function deskTrader(url: string, engine: RunningEngine, hint: string, amount = '1000000'): Promise<GatewayClient> {
  const signer = await localParty(hint);
  const client = new GatewayClient({ baseUrl: url, retry: { retries: 0 } });
  const s = await client.createSession(signer);
  if (!s.ok) throw new Error(`session: ${s.code}`);
  await faucet(engine.url, engine.adminToken, signer.party, amount);
  return client;
}

/** The party's open and partially filled orders, as the engine holds them. */
export async function engineOpenOrders(engine: RunningEngine, party: string): Promise<{ orderId: string; market: string; clientOrderId: string | null; status: string }[]> {
  const r = await http(engine.url, 'GET', `/v1/admin/users/${encodeURIComponent(party)}/orders?market=all`, { headers: { authorization: `Bearer ${engine.adminToken}` } });
  return r.body.orders;
}
