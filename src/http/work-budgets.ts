// Budgets per client address for the work a stream message or upgrade makes the gateway do
// (docs/security.md "Work a message triggers"): database lookups of sessions a party proof names and
// this process does not hold (SESSION_LOOKUPS_PER_IP), and the engine and database reads of user
// channel snapshots (SNAPSHOT_READS_PER_IP), per RATE_LIMIT_WINDOW_MS, shared by the fleet through
// Redis like the rate limits. The message rate alone does not bound them: one subscribe may prove a
// random session (a database read) or ask the snapshot of 100 parties (200 reads). Past a budget the
// work is refused before it is done: 429 `budget_exhausted` with `budget` and Retry-After (an
// upgrade, a REST answer) or the same as a `stream.error`.
import type { Config } from '../config/env.js';
import type { RedisHandle } from '../fleet/redis.js';
import { addressBudget, type AddressBudget } from '../fleet/address-budget.js';
import { systemClock, type Clock } from '../contracts/clock.js';
import { ApiError } from './errors.js';

export type BudgetName = 'session_lookups' | 'snapshot_reads';

export interface WorkBudgets {
  /** Spends `units` of an address's budget: throws 429 `budget_exhausted` past it. */
  spend(name: BudgetName, address: string, units?: number): Promise<void>;
}

const SETTINGS: Record<BudgetName, string> = { session_lookups: 'SESSION_LOOKUPS_PER_IP', snapshot_reads: 'SNAPSHOT_READS_PER_IP' };

export function workBudgets(config: Pick<Config, 'sessionLookupsPerIp' | 'snapshotReadsPerIp' | 'rateLimitWindowMs'>, redis: RedisHandle | null, clock: Clock = systemClock): WorkBudgets {
  const budgets: Record<BudgetName, AddressBudget> = {
    session_lookups: addressBudget('session_lookups', config.sessionLookupsPerIp, config.rateLimitWindowMs, redis, clock),
    snapshot_reads: addressBudget('snapshot_reads', config.snapshotReadsPerIp, config.rateLimitWindowMs, redis, clock),
  };
  return {
    async spend(name, address, units = 1) {
      if (units <= 0) return;
      const budget = budgets[name];
      const verdict = await budget.take(address, units);
      if (verdict.ok) return;
      const retryAfterS = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
      throw new ApiError(
        'budget_exhausted',
        `this client address has used its ${budget.max} ${name.replace('_', ' ')} per ${budget.windowMs} ms (${SETTINGS[name]}); retry in ${retryAfterS} s`,
        { budget: name, retryAfterS },
      );
    },
  };
}
