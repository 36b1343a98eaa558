// What a party's profit-and-loss history is computed from (GET /v1/users/:party/pnl, docs/rest.md
// "PnL history"), read in one REPEATABLE READ snapshot so every figure is as of one seq:
//   legs   the party's fill legs, each with the position state after it (size, entry price, the
//          epoch's realized PnL: from the fill event's leg), its fee and the balance after it;
//   cash   its deposits and approved withdrawals with the balance after each;
//   marks  for every market it traded: the last match price before the window, and the last match
//          price of each bucket of the window (the mark of the account view: the latest match).
// Engine time (events.ts) places everything in buckets, as the candles do.
// Indexes: fills (party, seq desc), events pk, deposits (party, seq desc), withdrawals (party, seq
// desc), fills (market, seq desc).
import type { Queryable } from '../database.js';

export interface PnlLegRow {
  seq: number;
  leg: number;
  market: string;
  tsMs: number;
  fee: string;
  realizedPnl: string;
  newBalance: string;
  positionId: string;
  positionSize: string;
  entryPrice: string;
}

export interface PnlCashRow {
  seq: number;
  tsMs: number;
  /** + for a deposit, − for an approved withdrawal. */
  amount: string;
  newBalance: string | null;
}

export interface PnlMarkRow {
  market: string;
  /** Bucket start (ms); null: the last match before the window. */
  bucketMs: number | null;
  price: string;
}

export interface PnlSource {
  /** The window as read: first and last bucket starts (ms, aligned), whose buckets are whole. */
  fromMs: number;
  toMs: number;
  headSeq: number;
  headMs: number | null;
  legs: PnlLegRow[];
  cash: PnlCashRow[];
  marks: PnlMarkRow[];
}

/** More fill legs than this for one party is refused (the history would be read whole). */
export const PNL_MAX_LEGS = 200_000;

/**
 * `toMs` defaults to the mirror's head (engine time of its newest event; `nowMs` on an empty mirror), `fromMs` to the party's
 * first event, at most `maxPoints` buckets before `toMs`. Buckets are aligned on `intervalMs`.
 */
export async function loadPnlSource(tx: Queryable, party: string, asked: { fromMs?: number | undefined; toMs?: number | undefined; intervalMs: number; originMs?: number; maxPoints: number; nowMs: number }): Promise<PnlSource> {
  const [head] = await tx<{ seq: number | null; ts: Date | null }[]>`SELECT seq, ts FROM events ORDER BY seq DESC LIMIT 1`;
  const headMs = head?.ts ? new Date(head.ts).getTime() : null;
  const origin = asked.originMs ?? 0;
  const align = (ms: number) => Math.floor((ms - origin) / asked.intervalMs) * asked.intervalMs + origin;
  const toMs = align(asked.toMs ?? headMs ?? asked.nowMs);
  const to = new Date(toMs + asked.intervalMs).toISOString();
  const legs = await tx<Array<Omit<PnlLegRow, 'tsMs'> & { ts: Date }>>`
    SELECT f.seq::int8 AS seq, f.leg, f.market, e.ts, f.fee::text AS fee, f.realized_pnl::text AS realized_pnl, f.new_balance::text AS new_balance,
      f.position_id, (e.payload->'legs'->f.leg->>'positionSize') AS position_size, (e.payload->'legs'->f.leg->>'entryPrice') AS entry_price
    FROM fills f JOIN events e ON e.seq = f.seq
    WHERE f.party = ${party} AND e.ts < ${to}
    ORDER BY f.seq, f.leg LIMIT ${PNL_MAX_LEGS + 1}`;
  const cash = await tx<Array<Omit<PnlCashRow, 'tsMs'> & { ts: Date }>>`
    SELECT d.seq::int8 AS seq, e.ts, d.amount::text AS amount, e.payload->>'newBalance' AS new_balance
      FROM deposits d JOIN events e ON e.seq = d.seq WHERE d.party = ${party} AND e.ts < ${to}
    UNION ALL
    SELECT w.decided_seq::int8 AS seq, e.ts, (-w.amount)::text AS amount, e.payload->>'newBalance' AS new_balance
      FROM withdrawals w JOIN events e ON e.seq = w.decided_seq WHERE w.party = ${party} AND w.status = 'approved' AND e.ts < ${to}
    ORDER BY seq`;
  // Both lists are in seq order: the party's first event is the first of one of them.
  const firstMs = Math.min(legs[0] ? new Date(legs[0].ts).getTime() : toMs, cash[0] ? new Date(cash[0].ts).getTime() : toMs, toMs);
  const fromMs = align(asked.fromMs ?? Math.max(firstMs, toMs - (asked.maxPoints - 1) * asked.intervalMs));
  const window = { intervalMs: asked.intervalMs };
  const markets = [...new Set(legs.map((l) => l.market))];
  const marks: PnlMarkRow[] = [];
  const from = new Date(fromMs).toISOString();
  for (const market of markets) {
    const [before] = await tx<{ price: string }[]>`
      SELECT f.price::text AS price FROM fills f JOIN events e ON e.seq = f.seq
      WHERE f.market = ${market} AND e.ts < ${from} ORDER BY f.seq DESC LIMIT 1`;
    if (before) marks.push({ market, bucketMs: null, price: before.price });
    const inWindow = await tx<{ bucket: string; price: string }[]>`
      SELECT (floor((extract(epoch FROM e.ts) * 1000 - ${origin}) / ${window.intervalMs}) * ${window.intervalMs} + ${origin})::int8::text AS bucket,
        (array_agg(f.price::text ORDER BY f.seq DESC))[1] AS price
      FROM fills f JOIN events e ON e.seq = f.seq
      WHERE f.market = ${market} AND e.ts >= ${from} AND e.ts < ${to}
      GROUP BY 1`;
    for (const r of inWindow) marks.push({ market, bucketMs: Number(r.bucket), price: r.price });
  }
  return {
    fromMs,
    toMs,
    headSeq: head?.seq ?? 0,
    headMs,
    legs: legs.map(({ ts, ...l }) => ({ ...l, seq: Number(l.seq), tsMs: new Date(ts).getTime(), positionSize: l.positionSize ?? '0', entryPrice: l.entryPrice ?? '0' })),
    cash: cash.map(({ ts, ...c }) => ({ ...c, seq: Number(c.seq), tsMs: new Date(ts).getTime() })),
    marks,
  };
}
