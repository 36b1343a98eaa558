// What the faucet needs to know about a party, read from the indexer mirror so every replica and
// every restart agrees (docs/trading.md "Faucet": the cooldown must not live in process memory alone).
//
// Cooldown: the latest deposit with source 'faucet' of the party.
// Balance: the party's cash after its latest balance-changing event. The spec's REST balance is
// the `new_balance` of the last fill, but deposits and approved withdrawals move the balance too
// (docs/engine.md "Orders and matching"), and a faucet top-up is exactly such a deposit, so the ceiling uses whichever of
// the last fill leg, the last `inbound.deposit` and the last `engine.approve_submitted` event has
// the greatest seq (both events carry `newBalance`). Each branch walks one index backwards and
// stops at its first row.
import type { Queryable } from '../database.js';

export interface FaucetFacts {
  /** Unix ms of the party's latest faucet deposit in the mirror; null when none. */
  lastFaucetAtMs: number | null;
  /** Cash balance as a decimal string; "0" when the party has no balance-changing event. */
  balance: string;
}

export const NO_FAUCET_FACTS: FaucetFacts = Object.freeze({ lastFaucetAtMs: null, balance: '0' });

export async function faucetFactsOf(sql: Queryable, party: string): Promise<FaucetFacts> {
  const [faucet, balance] = await Promise.all([
    sql<{ createdAt: string }[]>`
      SELECT created_at FROM deposits
      WHERE party = ${party} AND source = 'faucet'
      ORDER BY seq DESC LIMIT 1`,
    sql<{ balance: string | null }[]>`
      SELECT balance FROM (
        (SELECT seq, new_balance::text AS balance FROM fills
          WHERE party = ${party} ORDER BY seq DESC, leg DESC LIMIT 1)
        UNION ALL
        (SELECT seq, payload->>'newBalance' AS balance FROM events
          WHERE party = ${party} AND kind IN ('inbound.deposit', 'engine.approve_submitted')
          ORDER BY seq DESC LIMIT 1)
      ) latest ORDER BY seq DESC LIMIT 1`,
  ]);
  return {
    lastFaucetAtMs: faucet[0] ? Date.parse(faucet[0].createdAt) : null,
    balance: balance[0]?.balance ?? '0',
  };
}
