// The verifiable facts of one party's account as of a past seq N (docs/account.md "As of a seq"):
// what the mirror recorded at seq <= N, in one REPEATABLE READ snapshot (run it with
// Database.readSnapshot), so the mirror's head and the facts are of the same moment.
//   collateral  the newest of: the party's last fill leg at or before N (`new_balance`), its last
//               deposit and its last approved withdrawal at or before N (their events' `newBalance`);
//   positions   per market, the party's last fill leg at or before N: the epoch it left (`position_id`,
//               `realized_pnl`; size and entry price from the leg in the event), open when its size is
//               not zero.
// Only what the fill legs and balance events record: no margin, mark or order, which a past seq
// would need rebuilt by a second implementation of the account view (ADR 0153).
// Indexes: fills (party, seq desc) and (party, market, seq desc), deposits (party, seq desc),
// withdrawals (party, seq desc), events pk.
import type { Queryable } from '../database.js';
import { formatDecimal, isDecimal, normalizeDecimal, parseDecimal } from '../../decimal.js';

export interface AsOfPosition {
  positionId: string;
  market: string;
  size: string;
  entryPrice: string;
  realizedPnl: string;
  /** Seq of the fill leg that left the epoch so. */
  asOfSeq: number;
}

export interface AccountAsOf {
  asOfSeq: number;
  /** The newest seq the mirror held (the snapshot's). */
  head: number;
  collateral: string;
  collateralAsOfSeq: number | null;
  positions: AsOfPosition[];
}

/** The mirror's head is below the seq asked for: nothing can be said as of it yet. */
export interface NotYetIndexed {
  notYetIndexed: true;
  head: number;
}

/** Markets a party has traded in; more than this is not an account (the rest is left out). */
const MAX_MARKETS = 1_000;

export async function loadAccountAsOf(tx: Queryable, party: string, seq: number): Promise<AccountAsOf | NotYetIndexed> {
  const [h] = await tx<{ seq: number | null }[]>`SELECT max(seq) AS seq FROM events`;
  const head = h?.seq ?? 0;
  if (seq > head) return { notYetIndexed: true, head };

  const balances = await tx<{ seq: number; value: string | null }[]>`
    (SELECT seq, new_balance::text AS value FROM fills
      WHERE seq = (SELECT max(seq) FROM fills WHERE party = ${party} AND seq <= ${seq}) AND party = ${party} ORDER BY leg DESC LIMIT 1)
    UNION ALL
    (SELECT d.seq, e.payload->>'newBalance' AS value
      FROM (SELECT seq FROM deposits WHERE party = ${party} AND seq <= ${seq} ORDER BY seq DESC LIMIT 1) d JOIN events e ON e.seq = d.seq)
    UNION ALL
    (SELECT w.seq, e.payload->>'newBalance' AS value
      FROM (SELECT decided_seq AS seq FROM withdrawals WHERE party = ${party} AND status = 'approved' AND decided_seq <= ${seq}
            ORDER BY decided_seq DESC LIMIT 1) w JOIN events e ON e.seq = w.seq)`;
  // Each source's last seq is found first on the party's index, then its one row or event: written
  // as one ORDER BY … LIMIT 1 over the join or over (seq, leg), the planner walks `events` or the
  // fills' primary key back from N until it meets the party (about 50 ms per 100 000 events).
  let balance: { seq: number; value: string } | null = null;
  for (const b of balances) if (isDecimal(b.value) && (!balance || b.seq > balance.seq)) balance = { seq: b.seq, value: b.value };

  // The party's markets by a skip scan of (party, market, seq desc): one probe per market, not one
  // row per fill leg (a market maker has millions); then the last leg at or before N in each (its
  // seq from the same index, then the legs of that one event).
  const legs = await tx<{ market: string; seq: number; positionId: string; realizedPnl: string; positionSize: string | null; entryPrice: string | null }[]>`
    WITH RECURSIVE m AS (
      (SELECT market FROM fills WHERE party = ${party} ORDER BY market LIMIT 1)
      UNION ALL
      SELECT (SELECT f.market FROM fills f WHERE f.party = ${party} AND f.market > m.market ORDER BY f.market LIMIT 1)
      FROM m WHERE m.market IS NOT NULL
    )
    SELECT l.market, l.seq, l.position_id, l.realized_pnl::text,
           e.payload->'legs'->l.leg->>'positionSize' AS position_size,
           e.payload->'legs'->l.leg->>'entryPrice' AS entry_price
    FROM (SELECT market FROM m WHERE market IS NOT NULL LIMIT ${MAX_MARKETS}) mk
    CROSS JOIN LATERAL (
      SELECT f.market, f.seq, f.leg, f.position_id, f.realized_pnl FROM fills f
      WHERE f.seq = (SELECT max(x.seq) FROM fills x WHERE x.party = ${party} AND x.market = mk.market AND x.seq <= ${seq})
        AND f.party = ${party} AND f.market = mk.market
      ORDER BY f.leg DESC LIMIT 1
    ) l
    JOIN events e ON e.seq = l.seq
    ORDER BY l.market`;
  const positions: AsOfPosition[] = [];
  for (const l of legs) {
    // A leg without a well-formed size or entry records no epoch (the indexer stores the engine's payload as sent).
    if (!isDecimal(l.positionSize) || !isDecimal(l.entryPrice) || parseDecimal(l.positionSize) === 0n) continue;
    positions.push({ positionId: l.positionId, market: l.market, size: normalizeDecimal(l.positionSize), entryPrice: normalizeDecimal(l.entryPrice), realizedPnl: normalizeDecimal(l.realizedPnl), asOfSeq: l.seq });
  }
  return { asOfSeq: seq, head, collateral: balance ? normalizeDecimal(balance.value) : formatDecimal(0n), collateralAsOfSeq: balance?.seq ?? null, positions };
}
