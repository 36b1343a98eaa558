// The faucet's facts about a party (cooldown, balance), read from the indexer mirror behind the
// one database deadline. The SQL and its reasoning live in src/db/queries/faucet.ts.
import type { Database } from '../../db/database.js';
import { faucetFactsOf, NO_FAUCET_FACTS, type FaucetFacts } from '../../db/queries/faucet.js';

export type { FaucetFacts };

export async function faucetFacts(db: Database, party: string): Promise<FaucetFacts> {
  return db.read<FaucetFacts>(NO_FAUCET_FACTS, (sql) => faucetFactsOf(sql, party));
}
