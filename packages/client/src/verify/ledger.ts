// The engine's accounting rules (docs/engine.md "Arithmetic"), replayed over one party's committed
// events with exact decimals: BigInts scaled by 10^10, never a float. Each event's claimed state
// after it (a deposit's or approved withdrawal's `newBalance`; each fill leg's `size`, `fee`,
// `positionId`, `positionSize`, `entryPrice`, `realizedPnl`, `newBalance`) is compared with what
// the rules give from the party's own earlier events and the match's facts (price, size, taker
// side, the party's role). The recomputation never adopts a claim it found wrong: the balance and
// positions it ends with are what the rules say they should be. Pure, no imports: browsers and
// Node load it alike.

const SCALE = 10n ** 10n;
/** 0.0005 at scale 10^10: the taker's fee rate; the maker pays none. */
export const TAKER_FEE_RATE = 5_000_000n;
const WIRE = /^-?\d+\.\d{10}$/;

/** A wire decimal (exactly 10 places, as the engine writes them) as a scaled BigInt; null when it is not one. */
export function parseWire(v: unknown): bigint | null {
  if (typeof v !== 'string' || !WIRE.test(v)) return null;
  const dot = v.length - 11;
  return BigInt(v.slice(0, dot) + v.slice(dot + 1));
}

/** A scaled BigInt as the engine writes it: exactly 10 places, zero never negative. */
export function formatWire(v: bigint): string {
  const neg = v < 0n;
  const digits = (neg ? -v : v).toString().padStart(11, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -10)}.${digits.slice(-10)}`;
}

/** n ÷ d rounded half away from zero (d > 0). */
export function divRound(n: bigint, d: bigint): bigint {
  const neg = n < 0n;
  const q = ((neg ? -n : n) + d / 2n) / d;
  return neg ? -q : q;
}

/** a × b of two scaled values, rounded half away from zero to 10 places. */
export function mulRound(a: bigint, b: bigint): bigint {
  return divRound(a * b, SCALE);
}

/** A fill leg's fee: round(rate × round(q × p)). */
export function feeOf(rate: bigint, q: bigint, p: bigint): bigint {
  return mulRound(rate, mulRound(q, p));
}

/** The entry of an epoch that grows by q at p: round((|s0| × e0 + q × p) / (|s0| + q)), one rounding. */
export function grownEntry(absSize: bigint, entry: bigint, q: bigint, p: bigint): bigint {
  return divRound(absSize * entry + q * p, absSize + q);
}

/** The PnL a reduction of q at p realizes on an epoch entered at e0 with direction dir: round((p − e0) × q × dir). */
export function realizedOf(p: bigint, e0: bigint, q: bigint, dir: bigint): bigint {
  return divRound((p - e0) * q * dir, SCALE);
}

/** One open epoch as the rules have it. */
export interface LedgerPosition {
  positionId: string;
  market: string;
  /** Signed: positive long, negative short. */
  size: bigint;
  entryPrice: bigint;
  realizedPnl: bigint;
  /** Seq of the event that last changed it. */
  seq: number;
}

/** The fields of an event a verifier checks. */
export type LedgerField =
  | 'newBalance'
  | 'fee'
  | 'size'
  | 'side'
  | 'price'
  | 'positionId'
  | 'positionSize'
  | 'entryPrice'
  | 'realizedPnl'
  | 'legs'
  | 'depositId'
  | 'withdrawalId'
  | 'shape';

/** A claim of the engine that the rules do not give. */
export interface Discrepancy {
  seq: number;
  kind: string;
  field: LedgerField;
  /** What the rules give (wire decimal, id or count), and what the event says. */
  expected: string;
  actual: string;
  market?: string;
  /** Index of the leg in the event's `legs` (fills only). */
  leg?: number;
  /** The leg's role (fills only). */
  role?: 'taker' | 'maker';
  /** The party's side of the match, the leg's size and the match price (fills only), to say which trade it was. */
  trade?: { side: 'buy' | 'sell'; size: string; price: string };
  message: string;
}

/** One event as replayed: the seq, kind and payload of a committed envelope. */
export interface LedgerEvent {
  seq: number;
  kind: string;
  party?: string;
  market?: string;
  payload: Record<string, unknown>;
}

export interface CreditRecord {
  seq: number;
  amount: bigint;
  source: string;
  txId: string | null;
}

interface Leg {
  party?: unknown;
  role?: unknown;
  side?: unknown;
  size?: unknown;
  price?: unknown;
  fee?: unknown;
  positionId?: unknown;
  positionSize?: unknown;
  entryPrice?: unknown;
  realizedPnl?: unknown;
  newBalance?: unknown;
}

/** The party's collateral and positions, replayed event by event by the published rules. */
export class Ledger {
  balance = 0n;
  /** Open epochs by market. */
  readonly positions = new Map<string, LedgerPosition>();
  /** Every deposit credited, by depositId (a second credit of one id is a discrepancy). */
  readonly deposits = new Map<string, CreditRecord>();
  /** Every approved withdrawal debited, by withdrawalId. */
  readonly withdrawals = new Map<string, { seq: number; amount: bigint }>();
  /** Withdrawal requests seen, by withdrawalId: the amount an approval debits. */
  private readonly requested = new Map<string, bigint>();
  /** Epoch ids seen, so a fresh epoch cannot reuse one. */
  private readonly epochIds = new Set<string>();
  /** Events replayed, fill legs checked, and events whose claims differ. */
  events = 0;
  legs = 0;
  differing = 0;
  /** The first discrepancy found, and up to `keep` of them in seq order. */
  readonly discrepancies: Discrepancy[] = [];

  constructor(
    readonly party: string,
    private readonly keep = 20,
  ) {}

  /** Replays one event of the party (any kind; those that move nothing are counted and passed). */
  apply(e: LedgerEvent): void {
    this.events++;
    let found = false;
    const report = (d: Omit<Discrepancy, 'seq' | 'kind'>): void => {
      found = true;
      if (this.discrepancies.length < this.keep) this.discrepancies.push({ seq: e.seq, kind: e.kind, ...d });
    };
    switch (e.kind) {
      case 'inbound.deposit':
        this.deposit(e, report);
        break;
      case 'inbound.withdrawal_request': {
        const id = e.payload.withdrawalId;
        const amount = parseWire(e.payload.amount);
        if (typeof id === 'string' && amount !== null) this.requested.set(id, amount);
        else report({ field: 'shape', expected: 'withdrawalId and amount', actual: JSON.stringify(e.payload), message: `withdrawal request at seq ${e.seq} is malformed` });
        break;
      }
      case 'engine.approve_submitted':
        this.approve(e, report);
        break;
      case 'engine.order_filled':
        this.fill(e, report);
        break;
      default:
        break;
    }
    if (found) this.differing++;
  }

  private check(report: (d: Omit<Discrepancy, 'seq' | 'kind'>) => void, field: LedgerField, expected: bigint, claimed: unknown, what: string, extra: Partial<Discrepancy> = {}): void {
    const actual = parseWire(claimed);
    if (actual === expected) return;
    const shown = actual === null ? String(claimed) : formatWire(actual);
    report({ field, expected: formatWire(expected), actual: shown, message: `${what}: the rules give ${formatWire(expected)}, the engine says ${shown}`, ...extra });
  }

  private deposit(e: LedgerEvent, report: (d: Omit<Discrepancy, 'seq' | 'kind'>) => void): void {
    const id = e.payload.depositId;
    const amount = parseWire(e.payload.amount);
    if (typeof id !== 'string' || amount === null || amount <= 0n) {
      report({ field: 'shape', expected: 'depositId and a positive amount', actual: JSON.stringify(e.payload), message: `deposit at seq ${e.seq} is malformed` });
      return;
    }
    const earlier = this.deposits.get(id);
    if (earlier) {
      report({ field: 'depositId', expected: `credited once (seq ${earlier.seq})`, actual: `credited again at seq ${e.seq}`, message: `deposit ${id} is credited twice (seq ${earlier.seq} and ${e.seq})` });
      return;
    }
    this.balance += amount;
    this.deposits.set(id, { seq: e.seq, amount, source: String(e.payload.source), txId: typeof e.payload.txId === 'string' ? e.payload.txId : null });
    this.check(report, 'newBalance', this.balance, e.payload.newBalance, `balance after deposit ${id} of ${formatWire(amount)}`);
  }

  private approve(e: LedgerEvent, report: (d: Omit<Discrepancy, 'seq' | 'kind'>) => void): void {
    const id = e.payload.withdrawalId;
    const amount = typeof id === 'string' ? this.requested.get(id) : undefined;
    if (typeof id !== 'string' || amount === undefined) {
      report({ field: 'withdrawalId', expected: 'a withdrawal the party requested', actual: String(id), message: `approval at seq ${e.seq} of a withdrawal the party never requested` });
      return;
    }
    const earlier = this.withdrawals.get(id);
    if (earlier) {
      report({ field: 'withdrawalId', expected: `debited once (seq ${earlier.seq})`, actual: `debited again at seq ${e.seq}`, message: `withdrawal ${id} is debited twice (seq ${earlier.seq} and ${e.seq})` });
      return;
    }
    this.balance -= amount;
    this.withdrawals.set(id, { seq: e.seq, amount });
    this.check(report, 'newBalance', this.balance, e.payload.newBalance, `balance after withdrawal ${id} of ${formatWire(amount)}`);
  }

  private fill(e: LedgerEvent, report: (d: Omit<Discrepancy, 'seq' | 'kind'>) => void): void {
    const p = e.payload;
    const price = parseWire(p.price);
    const size = parseWire(p.size);
    const legs = Array.isArray(p.legs) ? (p.legs as Leg[]) : null;
    const market = e.market;
    if (price === null || size === null || size <= 0n || legs === null || typeof market !== 'string' || (p.takerSide !== 'buy' && p.takerSide !== 'sell')) {
      report({ field: 'shape', expected: 'price, size, takerSide, legs and a market', actual: JSON.stringify(p).slice(0, 200), message: `fill at seq ${e.seq} is malformed` });
      return;
    }
    // The party's legs, by role, in the order listed (the taker's first: a self-trade has both).
    for (const role of ['taker', 'maker'] as const) {
      const mine: Array<{ leg: Leg; index: number }> = [];
      legs.forEach((leg, index) => {
        if (leg?.party === this.party && leg.role === role) mine.push({ leg, index });
      });
      if (mine.length === 0) continue;
      const side = role === 'taker' ? p.takerSide : p.takerSide === 'buy' ? 'sell' : 'buy';
      this.side(e.seq, market, role, side, size, price, mine, report);
    }
  }

  /** One side of a match: one leg, or two through zero (closing, then opening), each checked. */
  private side(
    seq: number,
    market: string,
    role: 'taker' | 'maker',
    side: 'buy' | 'sell',
    q: bigint,
    price: bigint,
    mine: Array<{ leg: Leg; index: number }>,
    report: (d: Omit<Discrepancy, 'seq' | 'kind'>) => void,
  ): void {
    const rate = role === 'taker' ? TAKER_FEE_RATE : 0n;
    const delta = side === 'buy' ? q : -q;
    const cur = this.positions.get(market);
    // The legs the rules give: [size, opens a new epoch].
    const expected: Array<{ q: bigint; opens: boolean }> = [];
    if (!cur || cur.size > 0n === delta > 0n) expected.push({ q, opens: !cur });
    else {
      const abs = cur.size < 0n ? -cur.size : cur.size;
      if (q <= abs) expected.push({ q, opens: false });
      else expected.push({ q: abs, opens: false }, { q: q - abs, opens: true });
    }
    if (mine.length !== expected.length) {
      report({ field: 'legs', expected: String(expected.length), actual: String(mine.length), market, role, message: `the ${role} side of the match has ${mine.length} leg(s) for the party; the rules give ${expected.length}` });
    }
    for (let i = 0; i < expected.length; i++) {
      this.legs++;
      const { q: lq, opens } = expected[i]!;
      const claimed = mine[i]?.leg;
      const at = { market, role, trade: { side, size: formatWire(lq), price: formatWire(price) }, ...(mine[i] ? { leg: mine[i]!.index } : {}) };
      const fee = feeOf(rate, lq, price);
      let pos: LedgerPosition;
      const open = this.positions.get(market);
      if (opens || !open) {
        // A new epoch: its id is the engine's to choose, but never one seen before.
        const id = typeof claimed?.positionId === 'string' ? claimed.positionId : '';
        if (id === '' || this.epochIds.has(id)) report({ field: 'positionId', expected: 'a fresh epoch id', actual: id || 'none', ...at, message: `leg ${at.leg ?? '?'} opens a position in ${market} under an id already used (${id})` });
        this.epochIds.add(id);
        pos = { positionId: id, market, size: side === 'buy' ? lq : -lq, entryPrice: price, realizedPnl: 0n, seq };
        this.positions.set(market, pos);
        this.balance -= fee;
      } else {
        pos = open;
        if (claimed && claimed.positionId !== pos.positionId) report({ field: 'positionId', expected: pos.positionId, actual: String(claimed.positionId), ...at, message: `leg moves position ${String(claimed.positionId)}, the open epoch in ${market} is ${pos.positionId}` });
        const abs = pos.size < 0n ? -pos.size : pos.size;
        const growing = pos.size > 0n === (side === 'buy');
        if (growing) {
          pos.entryPrice = grownEntry(abs, pos.entryPrice, lq, price);
          pos.size += side === 'buy' ? lq : -lq;
          this.balance -= fee;
        } else {
          const dir = pos.size > 0n ? 1n : -1n;
          const pnl = realizedOf(price, pos.entryPrice, lq, dir);
          pos.realizedPnl += pnl;
          pos.size -= dir * lq;
          this.balance += pnl - fee;
          if (pos.size === 0n) this.positions.delete(market);
        }
        pos.seq = seq;
      }
      if (!claimed) continue;
      const what = (f: string) => `${f} after the ${role} leg in ${market} at seq ${seq}`;
      if (claimed.side !== side) report({ field: 'side', expected: side, actual: String(claimed.side), ...at, message: `${what('side')}: the rules give ${side}` });
      this.check(report, 'size', lq, claimed.size, what('size'), at);
      this.check(report, 'price', price, claimed.price, what('price'), at);
      this.check(report, 'fee', fee, claimed.fee, `fee of the ${role} leg in ${market} at seq ${seq}`, at);
      this.check(report, 'positionSize', pos.size, claimed.positionSize, what('position size'), at);
      this.check(report, 'entryPrice', pos.entryPrice, claimed.entryPrice, what('entry price'), at);
      this.check(report, 'realizedPnl', pos.realizedPnl, claimed.realizedPnl, what('realized PnL'), at);
      this.check(report, 'newBalance', this.balance, claimed.newBalance, what('balance'), at);
    }
  }
}
