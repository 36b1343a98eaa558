// A party's profit and loss over time (GET /v1/users/:party/pnl, docs/rest.md "PnL history"),
// computed exactly (BigInt at 10 places) from what the mirror holds (src/db/queries/pnl.ts), with the
// engine's arithmetic (docs/engine.md): a leg's realized PnL is the change of its epoch's realized
// PnL; its fee is what the balance lost beside it; the unrealized PnL at the end of a bucket is
// Σ round((mark − entry) × size) over the positions then open, each marked at its market's last
// match up to that moment — the account view's rule (docs/account.md), so the bucket holding the
// mirror's head equals GET /v1/users/:party/account.
import { formatDecimal, mulDecimal, parseDecimal } from '../decimal.js';

/** What the history is computed from (src/db/queries/pnl.ts reads it; declared here, a layer apart). */
export interface PnlInput {
  /** First and last bucket starts, aligned on the interval. */
  fromMs: number;
  toMs: number;
  legs: ReadonlyArray<{ seq: number; leg: number; market: string; tsMs: number; fee: string; realizedPnl: string; newBalance: string; positionId: string; positionSize: string; entryPrice: string }>;
  cash: ReadonlyArray<{ seq: number; tsMs: number; amount: string; newBalance: string | null }>;
  marks: ReadonlyArray<{ market: string; bucketMs: number | null; price: string }>;
}

export interface PnlPoint {
  /** Bucket start (engine time, UTC-aligned), ISO. */
  ts: string;
  /** Balance at the bucket's end (the engine's cash collateral). */
  collateral: string;
  /** Σ (mark − entry) × size of the positions open at the bucket's end, marked at the last match up to it. */
  unrealizedPnl: string;
  /** collateral + unrealizedPnl. */
  equity: string;
  /** Realized PnL of the legs in the bucket (fees not included). */
  realizedPnl: string;
  /** Fees of the legs in the bucket. */
  fees: string;
  cumulativeRealizedPnl: string;
  cumulativeFees: string;
  /** Σ deposits − Σ approved withdrawals up to the bucket's end. */
  netDeposits: string;
  /** Total PnL up to the bucket's end: cumulativeRealizedPnl − cumulativeFees + unrealizedPnl (= equity − netDeposits). */
  pnl: string;
}

interface Step {
  seq: number;
  leg: number;
  tsMs: number;
  apply(): void;
}

export function pnlHistory(source: PnlInput, intervalMs: number): PnlPoint[] {
  const window = { fromMs: source.fromMs, toMs: source.toMs };
  let balance = 0n;
  let balanceSeq = -1;
  let cumRealized = 0n;
  let cumFees = 0n;
  let netDeposits = 0n;
  let bucketRealized = 0n;
  let bucketFees = 0n;
  const positions = new Map<string, { size: bigint; entry: bigint }>();
  const epochRealized = new Map<string, bigint>();
  const setBalance = (seq: number, value: string | null) => {
    if (value !== null && seq >= balanceSeq) {
      balance = parseDecimal(value);
      balanceSeq = seq;
    }
  };

  const steps: Step[] = [
    ...source.legs.map((l) => ({
      seq: l.seq,
      leg: l.leg,
      tsMs: l.tsMs,
      apply: () => {
        const realized = parseDecimal(l.realizedPnl);
        const pnl = realized - (epochRealized.get(l.positionId) ?? 0n);
        epochRealized.set(l.positionId, realized);
        const fee = parseDecimal(l.fee);
        cumRealized += pnl;
        cumFees += fee;
        bucketRealized += pnl;
        bucketFees += fee;
        positions.set(l.market, { size: parseDecimal(l.positionSize), entry: parseDecimal(l.entryPrice) });
        setBalance(l.seq, l.newBalance);
      },
    })),
    ...source.cash.map((c) => ({
      seq: c.seq,
      leg: -1,
      tsMs: c.tsMs,
      apply: () => {
        netDeposits += parseDecimal(c.amount);
        setBalance(c.seq, c.newBalance);
      },
    })),
  ].sort((a, b) => a.seq - b.seq || a.leg - b.leg);

  // Marks: the last match before the window, then each bucket's last match.
  const marks = new Map<string, bigint>();
  const bucketMarks = new Map<number, Array<{ market: string; price: bigint }>>();
  for (const m of source.marks) {
    if (m.bucketMs === null) marks.set(m.market, parseDecimal(m.price));
    else bucketMarks.set(m.bucketMs, [...(bucketMarks.get(m.bucketMs) ?? []), { market: m.market, price: parseDecimal(m.price) }]);
  }

  // The source's window is already aligned on the interval's buckets (src/db/queries/pnl.ts).
  const first = window.fromMs;
  const last = window.toMs;
  const points: PnlPoint[] = [];
  let i = 0;
  // Everything before the window counts in the cumulative figures only.
  while (i < steps.length && steps[i]!.tsMs < first) steps[i++]!.apply();
  bucketRealized = 0n;
  bucketFees = 0n;
  for (let start = first; start <= last; start += intervalMs) {
    const end = start + intervalMs;
    while (i < steps.length && steps[i]!.tsMs < end) steps[i++]!.apply();
    for (const m of bucketMarks.get(start) ?? []) marks.set(m.market, m.price);
    let upnl = 0n;
    for (const [market, p] of positions) {
      if (p.size === 0n) continue;
      upnl += mulDecimal((marks.get(market) ?? p.entry) - p.entry, p.size);
    }
    points.push({
      ts: new Date(start).toISOString(),
      collateral: formatDecimal(balance),
      unrealizedPnl: formatDecimal(upnl),
      equity: formatDecimal(balance + upnl),
      realizedPnl: formatDecimal(bucketRealized),
      fees: formatDecimal(bucketFees),
      cumulativeRealizedPnl: formatDecimal(cumRealized),
      cumulativeFees: formatDecimal(cumFees),
      netDeposits: formatDecimal(netDeposits),
      pnl: formatDecimal(cumRealized - cumFees + upnl),
    });
    bucketRealized = 0n;
    bucketFees = 0n;
  }
  return points;
}
