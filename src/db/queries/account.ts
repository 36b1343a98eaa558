// The account seed of one party (docs/account.md): what the mirror says, consistent as of one seq
// (one REPEATABLE READ snapshot), for the account reducer (src/projections/account.ts).
//   collateral  the newest of: the party's last fill leg (`new_balance`), its last deposit and its
//               last approved withdrawal (their events carry `newBalance`);
//   positions   the open epochs;
//   orders      the non-terminal orders, each with the opening size the engine reserved margin for
//               when it came to rest (from the party's position right after the order's own taker
//               matches: the fill legs' `positionSize` in `events`; a snapshot that ends during
//               them gives the same reservation once capped by the remaining, see SeedOrder);
//   marks       the last match price of the markets the party holds or quotes;
//   leverage    every market's maxLeverage.
// Indexes: fills (party, seq desc) and (party, market, seq desc), deposits (party, seq desc),
// withdrawals (party, seq desc), events pk, positions (party, status, …), orders (party, status),
// fills (market, seq desc).
import type { Queryable } from '../database.js';
import { reducible, type AccountSeed, type SeedOrder } from '../../contracts/account-seed.js';
import { formatDecimal, parseDecimal } from '../../decimal.js';

/** More open orders than this for one party is not a trading account; the rest is left out. */
const MAX_ORDERS = 1_000;
const MAX_POSITIONS = 1_000;
/** Fill legs read to find where an order's own taker matches ended. */
const TAKER_SCAN = 200;

export const EMPTY_SEED: AccountSeed = { asOfSeq: 0, balance: null, positions: [], orders: [], marks: [], leverage: [] };

/** The seed of `party`, every statement in one snapshot (run it with Database.readSnapshot). */
export async function loadAccountSeed(tx: Queryable, party: string): Promise<AccountSeed> {
  return readSeed(tx, party);
}

async function readSeed(tx: Queryable, party: string): Promise<AccountSeed> {
  const [head] = await tx<{ seq: number | null }[]>`SELECT max(seq) AS seq FROM events`;
  const balances = await tx<{ seq: number; value: string }[]>`
    (SELECT seq, new_balance::text AS value FROM fills WHERE party = ${party} ORDER BY seq DESC, leg DESC LIMIT 1)
    UNION ALL
    (SELECT d.seq, e.payload->>'newBalance' AS value FROM deposits d JOIN events e ON e.seq = d.seq
      WHERE d.party = ${party} ORDER BY d.seq DESC LIMIT 1)
    UNION ALL
    (SELECT w.decided_seq AS seq, e.payload->>'newBalance' AS value FROM withdrawals w JOIN events e ON e.seq = w.decided_seq
      WHERE w.party = ${party} AND w.status = 'approved' ORDER BY w.decided_seq DESC LIMIT 1)`;
  let balance: AccountSeed['balance'] = null;
  for (const b of balances) if (b.value !== null && (!balance || b.seq > balance.seq)) balance = { value: b.value, seq: b.seq };

  const positions = await tx<{ positionId: string; market: string; size: string; entryPrice: string; realizedPnl: string; updatedSeq: number }[]>`
    SELECT position_id, market, size::text, entry_price::text, realized_pnl::text, updated_seq FROM positions
    WHERE party = ${party} AND status = 'open' ORDER BY updated_seq DESC LIMIT ${MAX_POSITIONS}`;
  const orderRows = await tx<{
    orderId: string; market: string; side: 'buy' | 'sell'; type: string; tif: string; price: string | null; size: string;
    filledSize: string; reduceOnly: boolean; createdSeq: number; updatedSeq: number;
  }[]>`
    SELECT order_id, market, side, type, tif, price::text, size::text, filled_size::text, reduce_only, created_seq, updated_seq
    FROM orders WHERE party = ${party} AND status IN ('open', 'partially_filled') ORDER BY created_seq LIMIT ${MAX_ORDERS}`;
  const orders: SeedOrder[] = [];
  for (const o of orderRows) {
    const remaining = parseDecimal(o.size) - parseDecimal(o.filledSize);
    const rests = o.type === 'limit' && o.tif !== 'ioc' && !o.reduceOnly;
    let opening = 0n;
    if (rests) {
      const { position, filled } = await whenRested(tx, party, o.market, o.orderId, o.createdSeq);
      const rest = parseDecimal(o.size) - filled - reducible(position, o.side);
      opening = rest > 0n ? rest : 0n;
    }
    orders.push({
      orderId: o.orderId,
      market: o.market,
      side: o.side,
      price: o.price,
      remaining: formatDecimal(remaining),
      rests,
      opening: formatDecimal(opening),
      updatedSeq: o.updatedSeq,
    });
  }
  const markets = [...new Set([...positions.map((p) => p.market), ...orderRows.map((o) => o.market)])];
  const marks: AccountSeed['marks'] = [];
  for (const market of markets) {
    const [last] = await tx<{ seq: number; price: string }[]>`
      SELECT seq, price::text FROM fills WHERE market = ${market} ORDER BY seq DESC LIMIT 1`;
    if (last) marks.push({ market, price: last.price, seq: last.seq });
  }
  const leverage = await tx<{ market: string; maxLeverage: number }[]>`SELECT symbol AS market, max_leverage FROM markets`;
  return { asOfSeq: head?.seq ?? 0, balance, positions: [...positions], orders, marks, leverage: [...leverage] };
}

/**
 * The seq at which the order's own taker matches ended: its fills come right after its
 * `order_placed` and before anything else touches the party's position in that market.
 */
async function takerEnd(tx: Queryable, party: string, market: string, orderId: string, createdSeq: number): Promise<{ end: number; filled: bigint }> {
  const legs = await tx<{ seq: number; orderId: string; role: string; size: string }[]>`
    SELECT seq, order_id, role, size::text FROM fills
    WHERE party = ${party} AND market = ${market} AND seq > ${createdSeq} ORDER BY seq, leg LIMIT ${TAKER_SCAN}`;
  let end = createdSeq;
  let filled = 0n;
  const bySeq = new Map<number, Array<(typeof legs)[number]>>();
  for (const l of legs) bySeq.set(l.seq, [...(bySeq.get(l.seq) ?? []), l]);
  for (const [seq, group] of bySeq) {
    const own = group.filter((l) => l.orderId === orderId && l.role === 'taker');
    if (own.length === 0) break;
    for (const l of own) filled += parseDecimal(l.size);
    end = seq;
  }
  return { end, filled };
}

/** The party's signed position in `market` when the order came to rest, and what it had filled as a taker. */
async function whenRested(tx: Queryable, party: string, market: string, orderId: string, createdSeq: number): Promise<{ position: bigint; filled: bigint }> {
  const { end, filled } = await takerEnd(tx, party, market, orderId, createdSeq);
  const [leg] = await tx<{ positionSize: string | null }[]>`
    SELECT e.payload->'legs'->f.leg->>'positionSize' AS position_size FROM fills f JOIN events e ON e.seq = f.seq
    WHERE f.party = ${party} AND f.market = ${market} AND f.seq <= ${end} ORDER BY f.seq DESC, f.leg DESC LIMIT 1`;
  return { position: leg?.positionSize ? parseDecimal(leg.positionSize) : 0n, filled };
}
