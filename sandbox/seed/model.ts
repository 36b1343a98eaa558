// The seed simulation: a small matching engine run in code, so every row the seed writes is
// consistent with every other (order fills add up to the fill legs, balances follow realized PnL
// and fees, flips close one position epoch and open another, every mirror row has its event, …).
// It only simulates what the data needs: FIFO price-time books, taker sweeps, position epochs.
import { createHash } from 'node:crypto';
import { Rng } from './rng.js';
import { abs, dec, div, fmt, mul } from './dec.js';
import type { BulkWriter } from './writer.js';
import type { EngineEvent, WireLeg } from '../engine/types.js';
import { batchRoot, eventLeafHash, MerkleAccumulator } from '../engine/commitments.js';

export interface MarketSpec {
  symbol: string;
  szDecimals: number;
  tick: string;
  mid: string;
  lo: string;
  hi: string;
  minLots: number;
  maxLots: number;
}

/** The three markets: prices stay inside one decade so the 5-significant-figure grid holds. */
export const MARKETS: readonly MarketSpec[] = [
  { symbol: 'BTC-PERP', szDecimals: 4, tick: '1', mid: '65000', lo: '50000', hi: '89999', minLots: 10, maxLots: 3000 },
  { symbol: 'ETH-PERP', szDecimals: 3, tick: '0.1', mid: '3200', lo: '2000', hi: '4999', minLots: 10, maxLots: 4000 },
  { symbol: 'SOL-PERP', szDecimals: 2, tick: '0.01', mid: '150', lo: '100', hi: '199', minLots: 10, maxLots: 4000 },
];

export interface SimOptions {
  seed: number;
  parties: number;
  /** Stop once at least this many fill legs exist … */
  fills: number;
  /** … and at least this many orders … */
  orders: number;
  /** … and at least this many events. */
  events: number;
  /** Commit a batch every this many seqs. */
  batchEvery: number;
  /** Time of seq 0 (ms); each seq is 250 ms later. */
  startMs: number;
}

export interface SimSummary {
  parties: string[];
  vaultOperator: string;
  maxSeq: number;
  mismatch: { party: string; userSeq: number; batchNum: number } | null;
  batches: number;
  pendingBatchNum: number | null;
}

type Side = 'buy' | 'sell';
const TAKER_FEE = 5_000_000n; // 0.0005

interface Market {
  spec: MarketSpec;
  lot: bigint;
  tick: bigint;
  mid: bigint;
  lo: bigint;
  hi: bigint;
  bids: Order[];
  asks: Order[];
}

interface Attached {
  triggerPrice: bigint;
  limitPrice: bigint | null;
  size: bigint | null;
}

interface Order {
  orderId: string;
  party: Party;
  market: Market;
  side: Side;
  type: 'limit' | 'market';
  tif: 'gtc' | 'ioc' | 'alo';
  price: bigint | null;
  size: bigint;
  filled: bigint;
  notional: bigint;
  status: 'open' | 'partially_filled' | 'filled' | 'cancelled' | 'rejected';
  clientOrderId: string | null;
  reduceOnly: boolean;
  tp: Attached | null;
  sl: Attached | null;
  createdSeq: number;
  updatedSeq: number;
}

interface Epoch {
  positionId: string;
  party: Party;
  market: Market;
  size: bigint;
  entry: bigint;
  realized: bigint;
  openedSeq: number;
  updatedSeq: number;
}

interface Trigger {
  triggerId: string;
  party: Party;
  market: Market;
  kind: 'tp' | 'sl';
  status: 'armed' | 'cancelled' | 'fired';
  triggerPrice: bigint;
  limitPrice: bigint | null;
  size: bigint | null;
  firedSize: bigint | null;
  firedLimit: bigint | null;
  positionId: string | null;
  parentOrderId: string | null;
  firedOrderId: string | null;
  createdSeq: number;
  updatedSeq: number;
}

interface Party {
  id: string;
  balance: bigint;
  nonce: number;
  nonceSeq: number;
  epochs: Map<string, Epoch>;
  resting: Set<Order>;
  userSeq: number;
  root: string;
  /** The party's pending user batch (the commitment scheme of docs/verification.md). */
  batch: MerkleAccumulator;
  firstSeq: number;
  lastSeq: number;
}

interface Withdrawal {
  seq: number;
  withdrawalId: string;
  party: Party;
  amount: bigint;
  nonce: number;
  createdSeq: number;
}


const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const ZERO_ROOT = '0'.repeat(64);

export class Simulation {
  private readonly rng: Rng;
  private readonly markets: Market[];
  private readonly parties: Party[] = [];
  private readonly armed = new Map<string, Trigger>();
  private readonly pendingWithdrawals: Withdrawal[] = [];
  private seq = 0;
  private ids = 0;
  private legs = 0;
  private orderCount = 0;
  private lastBatchSeq = 0;
  private batchNum = 0;
  private manifestRoot = ZERO_ROOT;
  private totalDeposits = 0n;
  private totalWithdrawals = 0n;
  private vaultSeq = 0;
  private mismatch: SimSummary['mismatch'] = null;
  readonly vaultOperator: string;

  constructor(
    private readonly opts: SimOptions,
    private readonly out: BulkWriter,
  ) {
    this.rng = new Rng(opts.seed);
    this.markets = MARKETS.map((spec) => ({
      spec,
      lot: 10n ** BigInt(10 - spec.szDecimals),
      tick: dec(spec.tick),
      mid: dec(spec.mid),
      lo: dec(spec.lo),
      hi: dec(spec.hi),
      bids: [],
      asks: [],
    }));
    this.vaultOperator = `vault-operator::${this.rng.hex(64)}`;
  }

  private id(prefix: string): string {
    return `${prefix}-${(++this.ids).toString(36)}`;
  }

  private ts(seq = this.seq): string {
    return new Date(this.opts.startMs + seq * 250).toISOString();
  }

  /**
   * Appends one engine event (the `events` row) and adds it to its parties' next user batch: the
   * event's own party, or (fills) each party with a leg, once however many legs it has.
   */
  private async emit(kind: string, payload: object, scope: { market?: string; party?: Party } = {}, touches: Party[] = []): Promise<number> {
    const seq = ++this.seq;
    const ts = this.ts(seq);
    await this.out.add('events', [seq, kind, ts, scope.market ?? null, scope.party?.id ?? null, payload]);
    if (kind === 'engine.user_batch_committed' || kind === 'outbound.batch_committed') return seq;
    const members = new Set<Party>(scope.party ? [scope.party] : touches);
    if (members.size === 0) return seq;
    const envelope: EngineEvent = { seq, kind, ts, payload: payload as Record<string, unknown> };
    if (scope.market !== undefined) envelope.market = scope.market;
    if (scope.party) envelope.party = scope.party.id;
    const leaf = eventLeafHash(envelope);
    for (const p of members) {
      if (p.batch.count === 0) p.firstSeq = seq;
      p.batch.push(leaf);
      p.lastSeq = seq;
    }
    return seq;
  }

  async run(): Promise<SimSummary> {
    await this.writeMarkets();
    for (let i = 0; i < this.opts.parties; i++) await this.addParty(i);
    const { fills, orders, events } = this.opts;
    let steps = 0;
    while (this.legs < fills || this.orderCount < orders || this.seq < events) {
      await this.step();
      if (this.seq - this.lastBatchSeq >= this.opts.batchEvery) await this.commit(true);
      if (++steps > 50_000_000) throw new Error('seed simulation did not converge');
    }
    // The last commitment is claimed by the engine but not on chain yet: `pending` verifications.
    await this.commit(false);
    await this.finish();
    return {
      parties: this.parties.map((p) => p.id),
      vaultOperator: this.vaultOperator,
      maxSeq: this.seq,
      mismatch: this.mismatch,
      batches: this.batchNum,
      pendingBatchNum: this.batchNum,
    };
  }

  private async writeMarkets(): Promise<void> {
    for (const m of this.markets) await this.out.add('markets', [m.spec.symbol, m.spec.szDecimals, '10.0000000000', 20, 'active']);
  }

  private async addParty(i: number): Promise<void> {
    const p: Party = {
      id: `trader-${i}::${this.rng.hex(64)}`,
      balance: 0n,
      nonce: 0,
      nonceSeq: 0,
      epochs: new Map(),
      resting: new Set(),
      userSeq: 0,
      root: ZERO_ROOT,
      batch: new MerkleAccumulator(),
      firstSeq: 0,
      lastSeq: 0,
    };
    this.parties.push(p);
    const sessionId = this.id('s');
    const publicKey = this.rng.hex(64);
    const expiresAt = new Date(this.opts.startMs + 86_400_000).toISOString();
    const seq = await this.emit('session.authorized', { sessionId, sessionPublicKey: publicKey, expiresAt }, { party: p });
    await this.out.add('sessions', [sessionId, p.id, publicKey, expiresAt, seq]);
    await this.deposit(p, dec(String(this.rng.int(50, 500) * 10_000)), 'chain');
  }

  private async step(): Promise<void> {
    const r = this.rng.next();
    const p = this.rng.pick(this.parties);
    const m = this.rng.pick(this.markets);
    if (r < 0.36) return this.placeMaker(p, m);
    if (r < 0.78) {
      await this.placeTaker(p, m);
      return;
    }
    if (r < 0.84) return this.cancelResting(p);
    if (r < 0.85) return this.reject(p, m);
    if (r < 0.86) return this.deposit(p, dec(String(this.rng.int(1, 50) * 100)), this.rng.chance(0.3) ? 'faucet' : 'chain');
    if (r < 0.875) return this.requestWithdrawal(p);
    if (r < 0.885) return this.decideWithdrawal();
    if (r < 0.93) return this.setTrigger(p, m);
    if (r < 0.95) return this.cancelTrigger();
    if (r < 0.98) return this.fireTrigger();
    await this.emit('engine.tick_start', { tick: this.seq });
  }

  // ---- orders --------------------------------------------------------------------------------

  private lots(m: Market): bigint {
    return BigInt(this.rng.int(m.spec.minLots, m.spec.maxLots)) * m.lot;
  }

  private newOrder(p: Party, m: Market, o: Partial<Order> & Pick<Order, 'side' | 'type' | 'tif' | 'price' | 'size'>): Order {
    this.orderCount++;
    return {
      orderId: this.id('o'),
      party: p,
      market: m,
      filled: 0n,
      notional: 0n,
      status: 'open',
      clientOrderId: this.rng.chance(0.5) ? `c-${this.rng.hex(12)}` : null,
      reduceOnly: false,
      tp: null,
      sl: null,
      createdSeq: 0,
      updatedSeq: 0,
      ...o,
    };
  }

  private wireOrder(o: Order) {
    const att = (a: Attached | null) => (a ? { triggerPrice: fmt(a.triggerPrice), limitPrice: a.limitPrice === null ? null : fmt(a.limitPrice), size: a.size === null ? null : fmt(a.size) } : null);
    return {
      orderId: o.orderId,
      party: o.party.id,
      market: o.market.spec.symbol,
      side: o.side,
      type: o.type,
      tif: o.tif,
      price: o.price === null ? null : fmt(o.price),
      size: fmt(o.size),
      filledSize: fmt(o.filled),
      avgPrice: o.filled === 0n ? null : fmt(div(o.notional, o.filled)),
      status: o.status,
      reduceOnly: o.reduceOnly,
      clientOrderId: o.clientOrderId,
      tp: att(o.tp),
      sl: att(o.sl),
      createdAt: this.ts(o.createdSeq),
      updatedAt: this.ts(o.updatedSeq),
      seq: o.updatedSeq,
    };
  }

  private async writeOrder(o: Order): Promise<void> {
    const d = (v: bigint | null | undefined) => (v === null || v === undefined ? null : fmt(v));
    await this.out.add('orders', [
      o.orderId, o.party.id, o.market.spec.symbol, o.side, o.type, o.tif, d(o.price), fmt(o.size), fmt(o.filled),
      o.filled === 0n ? null : fmt(div(o.notional, o.filled)), o.status, o.clientOrderId, o.createdSeq, o.updatedSeq,
      this.ts(o.createdSeq), this.ts(o.updatedSeq), o.reduceOnly, d(o.tp?.triggerPrice), d(o.tp?.limitPrice), d(o.tp?.size),
      d(o.sl?.triggerPrice), d(o.sl?.limitPrice), d(o.sl?.size),
    ]);
  }

  private rest(o: Order): void {
    const book = o.side === 'buy' ? o.market.bids : o.market.asks;
    const better = (a: bigint, b: bigint) => (o.side === 'buy' ? a > b : a < b);
    let i = book.length;
    while (i > 0 && better(o.price!, book[i - 1]!.price!)) i--; // FIFO within a price level
    book.splice(i, 0, o);
    o.party.resting.add(o);
  }

  private async placeMaker(p: Party, m: Market): Promise<void> {
    const side: Side = this.rng.chance(0.5) ? 'buy' : 'sell';
    const offset = BigInt(this.rng.int(1, 25)) * m.tick;
    const price = side === 'buy' ? m.mid - offset : m.mid + offset;
    const o = this.newOrder(p, m, { side, type: 'limit', tif: this.rng.chance(0.2) ? 'alo' : 'gtc', price, size: this.lots(m) });
    await this.placed(o);
    this.rest(o);
  }

  /** `engine.order_placed` carries the order as placed, stamped with the event's own seq. */
  private async placed(o: Order): Promise<void> {
    o.createdSeq = o.updatedSeq = this.seq + 1;
    await this.emit('engine.order_placed', { order: this.wireOrder(o) }, { market: o.market.spec.symbol, party: o.party });
  }

  private async placeTaker(p: Party, m: Market, forced?: { side: Side; size: bigint; reduceOnly: true; limit: bigint | null }): Promise<Order> {
    const epoch = p.epochs.get(m.spec.symbol);
    let side: Side = this.rng.chance(0.5) ? 'buy' : 'sell';
    let size = this.lots(m);
    if (!forced && epoch && this.rng.chance(0.35)) {
      // Trade against the position: close it, reduce it, or flip it through zero.
      side = epoch.size > 0n ? 'sell' : 'buy';
      const held = abs(epoch.size);
      const mode = this.rng.int(0, 2);
      size = mode === 0 ? held : mode === 1 ? held + this.lots(m) : (held / 2n / m.lot) * m.lot || m.lot;
    }
    if (forced) ({ side, size } = forced);
    const isMarket = forced ? forced.limit === null : this.rng.chance(0.3);
    const limit = forced?.limit ?? (side === 'buy' ? m.mid + 60n * m.tick : m.mid - 60n * m.tick);
    const o = this.newOrder(p, m, {
      side,
      type: isMarket ? 'market' : 'limit',
      tif: isMarket || forced ? 'ioc' : this.rng.chance(0.5) ? 'ioc' : 'gtc',
      price: isMarket ? null : limit,
      size,
      reduceOnly: forced?.reduceOnly ?? false,
    });
    if (!forced && this.rng.chance(0.08)) {
      const up = side === 'buy';
      o.tp = { triggerPrice: up ? m.mid + 200n * m.tick : m.mid - 200n * m.tick, limitPrice: null, size: null };
      if (this.rng.chance(0.5)) o.sl = { triggerPrice: up ? m.mid - 150n * m.tick : m.mid + 150n * m.tick, limitPrice: up ? m.mid - 160n * m.tick : m.mid + 160n * m.tick, size: null };
    }
    await this.placed(o);

    const book = side === 'buy' ? m.asks : m.bids;
    const crosses = (price: bigint) => o.price === null || (side === 'buy' ? price <= o.price : price >= o.price);
    while (o.filled < o.size && book.length > 0 && crosses(book[0]!.price!)) {
      const maker = book[0]!;
      const q = o.size - o.filled < maker.size - maker.filled ? o.size - o.filled : maker.size - maker.filled;
      await this.match(o, maker, q, maker.price!);
      if (maker.filled === maker.size) {
        book.shift();
        maker.party.resting.delete(maker);
        await this.writeOrder(maker);
      }
    }
    if (o.filled < o.size && o.tif === 'gtc' && o.price !== null) {
      this.rest(o);
    } else {
      if (o.filled < o.size) {
        o.status = 'cancelled';
        o.updatedSeq = await this.emit('engine.order_cancelled', { orderId: o.orderId, reason: o.reduceOnly ? 'reduce_only' : 'ioc' }, { market: m.spec.symbol, party: p });
      }
      await this.writeOrder(o);
    }
    if (o.tp || o.sl) await this.resolveAttached(o);
    // The last trade moves the mid, with a little noise, inside the market's decade.
    const noise = BigInt(this.rng.int(-3, 3)) * m.tick;
    const next = m.mid + noise;
    m.mid = next < m.lo ? m.lo : next > m.hi ? m.hi : next;
    return o;
  }

  private async match(taker: Order, maker: Order, q: bigint, price: bigint): Promise<void> {
    const m = taker.market;
    const seq = this.seq + 1; // the fill event's seq
    const takerLegs = this.legsFor(taker.party, m, taker.side, q, price, 'taker', taker.orderId, seq);
    const makerLegs = this.legsFor(maker.party, m, maker.side, q, price, 'maker', maker.orderId, seq);
    const legs = [...takerLegs, ...makerLegs];
    for (const o of [taker, maker]) {
      o.filled += q;
      o.notional += mul(q, price);
      o.status = o.filled === o.size ? 'filled' : 'partially_filled';
      o.updatedSeq = seq;
    }
    const matchId = this.id('m');
    await this.emit(
      'engine.order_filled',
      { matchId, price: fmt(price), size: fmt(q), takerSide: taker.side, takerOrderId: taker.orderId, makerOrderId: maker.orderId, legs: legs.map((l) => l.wire) },
      { market: m.spec.symbol },
      [taker.party, maker.party],
    );
    for (const [i, l] of legs.entries()) {
      await this.out.add('fills', [
        seq, i, `${seq}-${i}`, matchId, l.wire.orderId, l.wire.party, m.spec.symbol, l.wire.side, l.wire.role, l.wire.size,
        l.wire.price, l.wire.fee, l.wire.realizedPnl, l.wire.newBalance, l.wire.positionId, this.ts(seq),
      ]);
    }
    this.legs += legs.length;
    for (const l of legs) if (l.closed) await this.writePosition(l.closed, seq);
  }

  /** One party's legs of a match: one, or two when the position flips through zero. */
  private legsFor(p: Party, m: Market, side: Side, q: bigint, price: bigint, role: 'taker' | 'maker', orderId: string, seq: number) {
    const out: { wire: WireLeg; closed: Epoch | null }[] = [];
    const leg = (size: bigint, e: Epoch, realizedDelta: bigint, closed: boolean) => {
      const fee = role === 'taker' ? mul(mul(size, price), TAKER_FEE) : 0n;
      p.balance += realizedDelta - fee;
      e.updatedSeq = seq;
      out.push({
        wire: {
          party: p.id, orderId, role, side, size: fmt(size), price: fmt(price), fee: fmt(fee), positionId: e.positionId,
          positionSize: fmt(e.size), entryPrice: fmt(e.entry), realizedPnl: fmt(e.realized), newBalance: fmt(p.balance),
        },
        closed: closed ? e : null,
      });
    };
    const open = (size: bigint): Epoch => {
      const e: Epoch = { positionId: this.id('pos'), party: p, market: m, size, entry: price, realized: 0n, openedSeq: seq, updatedSeq: seq };
      p.epochs.set(m.spec.symbol, e);
      return e;
    };
    const d = side === 'buy' ? q : -q;
    const e = p.epochs.get(m.spec.symbol);
    if (!e) {
      leg(q, open(d), 0n, false);
    } else if (e.size > 0n === d > 0n) {
      e.entry = div(mul(abs(e.size), e.entry) + mul(q, price), abs(e.size) + q);
      e.size += d;
      leg(q, e, 0n, false);
    } else {
      const held = abs(e.size);
      const closeQ = q < held ? q : held;
      const realized = mul(price - e.entry, closeQ) * (e.size > 0n ? 1n : -1n);
      e.size += e.size > 0n ? -closeQ : closeQ;
      e.realized += realized;
      const closed = e.size === 0n;
      if (closed) p.epochs.delete(m.spec.symbol);
      leg(closeQ, e, realized, closed);
      if (q > held) leg(q - held, open(d > 0n ? q - held : held - q), 0n, false);
    }
    return out;
  }

  private async writePosition(e: Epoch, closedSeq: number | null): Promise<void> {
    await this.out.add('positions', [
      e.positionId, e.party.id, e.market.spec.symbol, fmt(e.size), fmt(e.entry), fmt(e.realized), closedSeq === null ? 'open' : 'closed',
      e.openedSeq, e.updatedSeq, closedSeq, this.ts(e.openedSeq), this.ts(e.updatedSeq), closedSeq === null ? null : this.ts(closedSeq),
    ]);
  }

  private async cancelResting(p: Party): Promise<void> {
    const o = p.resting.values().next().value;
    if (!o) return;
    const book = o.side === 'buy' ? o.market.bids : o.market.asks;
    book.splice(book.indexOf(o), 1);
    p.resting.delete(o);
    o.status = 'cancelled';
    o.updatedSeq = await this.emit('engine.order_cancelled', { orderId: o.orderId, reason: 'user' }, { market: o.market.spec.symbol, party: p });
    await this.writeOrder(o);
  }

  private async reject(p: Party, m: Market): Promise<void> {
    const o = this.newOrder(p, m, { side: 'buy', type: 'limit', tif: 'gtc', price: m.mid, size: m.lot * 3n + m.lot / 2n + 1n });
    o.status = 'rejected';
    o.clientOrderId ??= `c-${this.rng.hex(12)}`;
    o.createdSeq = o.updatedSeq = await this.emit(
      'engine.order_rejected',
      { clientOrderId: o.clientOrderId, code: 'invalid_size', error: `size is not a multiple of ${fmt(m.lot)}` },
      { market: m.spec.symbol, party: p },
    );
    await this.writeOrder(o);
  }

  // ---- triggers ------------------------------------------------------------------------------

  private wireTrigger(t: Trigger) {
    const d = (v: bigint | null) => (v === null ? null : fmt(v));
    return {
      triggerId: t.triggerId, party: t.party.id, market: t.market.spec.symbol, kind: t.kind, status: t.status,
      triggerPrice: fmt(t.triggerPrice), limitPrice: d(t.limitPrice), size: d(t.size), firedSize: d(t.firedSize),
      firedLimit: d(t.firedLimit), positionId: t.positionId,
    };
  }

  private async writeTrigger(t: Trigger): Promise<void> {
    const d = (v: bigint | null) => (v === null ? null : fmt(v));
    await this.out.add('triggers', [
      t.triggerId, t.party.id, t.market.spec.symbol, t.kind, t.status, fmt(t.triggerPrice), t.positionId, t.parentOrderId,
      t.firedOrderId, t.createdSeq, t.updatedSeq, this.ts(t.createdSeq), this.ts(t.updatedSeq), d(t.size), d(t.limitPrice),
      d(t.firedSize), d(t.firedLimit),
    ]);
  }

  private async arm(p: Party, e: Epoch, kind: 'tp' | 'sl', a: Attached, parentOrderId: string | null): Promise<void> {
    const t: Trigger = {
      triggerId: this.id('t'), party: p, market: e.market, kind, status: 'armed', triggerPrice: a.triggerPrice, limitPrice: a.limitPrice,
      size: a.size, firedSize: null, firedLimit: null, positionId: e.positionId, parentOrderId, firedOrderId: null, createdSeq: 0, updatedSeq: 0,
    };
    t.createdSeq = t.updatedSeq = this.seq + 1;
    await this.emit('engine.trigger_set', { trigger: this.wireTrigger(t) }, { market: e.market.spec.symbol, party: p });
    this.armed.set(t.triggerId, t);
  }

  private async resolveAttached(o: Order): Promise<void> {
    const e = o.party.epochs.get(o.market.spec.symbol);
    for (const [kind, a] of [['tp', o.tp], ['sl', o.sl]] as const) {
      if (!a) continue;
      const triggerId = `t-${(this.ids + 1).toString(36)}`;
      const outcome = e && o.filled > 0n ? 'armed' : 'abandoned';
      await this.emit('engine.attached_resolved', { orderId: o.orderId, triggerId, outcome }, { market: o.market.spec.symbol, party: o.party });
      if (e && outcome === 'armed') await this.arm(o.party, e, kind, a, o.orderId);
    }
  }

  private async setTrigger(p: Party, m: Market): Promise<void> {
    const e = p.epochs.get(m.spec.symbol);
    if (!e) return this.placeMaker(p, m);
    const kind = this.rng.chance(0.5) ? 'tp' : 'sl';
    const long = e.size > 0n;
    const away = BigInt(this.rng.int(20, 300)) * m.tick;
    const triggerPrice = (kind === 'tp') === long ? m.mid + away : m.mid - away;
    const half = (abs(e.size) / 2n / m.lot) * m.lot;
    await this.arm(p, e, kind, {
      triggerPrice,
      limitPrice: this.rng.chance(0.5) ? triggerPrice + (long ? -5n : 5n) * m.tick : null,
      size: this.rng.chance(0.5) && half > 0n ? half : null,
    }, null);
  }

  private firstArmed(): Trigger | undefined {
    return this.armed.values().next().value;
  }

  private async cancelTrigger(): Promise<void> {
    const t = this.firstArmed();
    if (!t) return;
    this.armed.delete(t.triggerId);
    t.status = 'cancelled';
    t.updatedSeq = await this.emit('engine.trigger_cancelled', { triggerId: t.triggerId }, { market: t.market.spec.symbol, party: t.party });
    await this.writeTrigger(t);
  }

  private async fireTrigger(): Promise<void> {
    const t = this.firstArmed();
    if (!t) return;
    const e = t.party.epochs.get(t.market.spec.symbol);
    if (!e || e.positionId !== t.positionId) return this.cancelTrigger(); // the epoch it guarded is gone
    const m = t.market;
    const held = abs(e.size);
    const size = t.size !== null && t.size < held ? t.size : held;
    this.armed.delete(t.triggerId);
    t.status = 'fired';
    t.firedSize = size;
    t.firedLimit = t.limitPrice;
    t.firedOrderId = `o-${(this.ids + 1).toString(36)}`;
    t.updatedSeq = await this.emit(
      'engine.trigger_fired',
      { triggerId: t.triggerId, orderId: t.firedOrderId, firedSize: fmt(size), firedLimit: t.limitPrice === null ? null : fmt(t.limitPrice) },
      { market: m.spec.symbol, party: t.party },
    );
    await this.writeTrigger(t);
    await this.placeTaker(t.party, m, { side: e.size > 0n ? 'sell' : 'buy', size, reduceOnly: true, limit: t.limitPrice });
  }

  // ---- collateral ----------------------------------------------------------------------------

  private async deposit(p: Party, amount: bigint, source: 'chain' | 'faucet'): Promise<void> {
    p.balance += amount;
    this.totalDeposits += amount;
    const depositId = this.id('d');
    const txId = source === 'chain' ? `0x${this.rng.hex(64)}` : null;
    const seq = await this.emit('inbound.deposit', { depositId, amount: fmt(amount), source, txId, newBalance: fmt(p.balance) }, { party: p });
    this.vaultSeq = seq;
    await this.out.add('deposits', [seq, depositId, p.id, fmt(amount), source, txId, this.ts(seq)]);
  }

  private async requestWithdrawal(p: Party): Promise<void> {
    const amount = dec(String(this.rng.int(1, 20) * 50));
    const nonce = ++p.nonce;
    const withdrawalId = this.id('w');
    const seq = await this.emit('inbound.withdrawal_request', { withdrawalId, amount: fmt(amount), nonce }, { party: p });
    p.nonceSeq = seq;
    this.pendingWithdrawals.push({ seq, withdrawalId, party: p, amount, nonce, createdSeq: seq });
  }

  private async decideWithdrawal(): Promise<void> {
    // A few requests always stay undecided, so the data has withdrawals in every status.
    if (this.pendingWithdrawals.length <= 3) return;
    const w = this.pendingWithdrawals.shift()!;
    const approve = this.rng.chance(0.75) && w.party.balance >= w.amount;
    let seq: number;
    let reason: string | null = null;
    if (approve) {
      w.party.balance -= w.amount;
      this.totalWithdrawals += w.amount;
      seq = await this.emit('engine.approve_submitted', { withdrawalId: w.withdrawalId, newBalance: fmt(w.party.balance) }, { party: w.party });
      this.vaultSeq = seq;
    } else {
      reason = 'insufficient free collateral';
      seq = await this.emit('engine.reject_submitted', { withdrawalId: w.withdrawalId, reason }, { party: w.party });
    }
    await this.out.add('withdrawals', [
      w.seq, w.withdrawalId, w.party.id, fmt(w.amount), w.nonce, approve ? 'approved' : 'rejected', reason, seq, this.ts(w.createdSeq), this.ts(seq),
    ]);
  }

  // ---- commitments ---------------------------------------------------------------------------

  /** Engine commitments: one user batch per party with new events, then the global manifest. */
  private async commit(onChain: boolean): Promise<void> {
    // Parties with new events, ordered by id (UTF-16 code units), as the manifest orders them.
    const members = this.parties.filter((p) => p.batch.count > 0).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (members.length === 0) {
      this.lastBatchSeq = this.seq;
      return;
    }
    const firstSeq = Math.min(...members.map((p) => p.firstSeq));
    const lastSeq = Math.max(...members.map((p) => p.lastSeq));
    const batchNum = ++this.batchNum;
    const userRoots: string[] = [];
    const chainRows: unknown[][] = [];
    for (const p of members) {
      const userSeq = ++p.userSeq;
      const prevRoot = p.root;
      const root = p.batch.root();
      const eventCount = p.batch.count;
      p.batch = new MerkleAccumulator();
      p.root = root;
      userRoots.push(root);
      const seq = await this.emit('engine.user_batch_committed', { userSeq, root, prevRoot, eventCount }, { party: p });
      let chainRoot = root;
      if (onChain && this.mismatch === null) {
        // The one deliberate incident: the chain recorded another root for this user batch.
        chainRoot = sha(`tampered|${root}`);
        this.mismatch = { party: p.id, userSeq, batchNum };
      }
      chainRows.push([p.id, userSeq, batchNum, chainRoot, prevRoot, eventCount, `0x${this.rng.hex(64)}`, this.ts(seq)]);
    }
    const prevRoot = this.manifestRoot;
    const root = batchRoot(userRoots);
    this.manifestRoot = root;
    const seq = await this.emit('outbound.batch_committed', { batchNum, root, prevRoot, userBatchCount: userRoots.length, firstSeq, lastSeq });
    this.lastBatchSeq = this.seq;
    if (!onChain) return;
    const committedAt = this.ts(seq);
    for (const row of chainRows) {
      row[7] = committedAt; // the chain records a batch's user batches in one transaction
      await this.out.add('user_batches', row as never);
    }
    await this.out.add('batches', [batchNum, root, prevRoot, userRoots.length, firstSeq, lastSeq, `0x${this.rng.hex(64)}`, committedAt]);
  }

  // ---- end state -----------------------------------------------------------------------------

  private async finish(): Promise<void> {
    for (const m of this.markets) for (const o of [...m.bids, ...m.asks]) await this.writeOrder(o);
    for (const p of this.parties) for (const e of p.epochs.values()) await this.writePosition(e, null);
    for (const t of this.armed.values()) await this.writeTrigger(t);
    for (const w of this.pendingWithdrawals) {
      await this.out.add('withdrawals', [w.seq, w.withdrawalId, w.party.id, fmt(w.amount), w.nonce, 'requested', null, null, this.ts(w.createdSeq), null]);
    }
    for (const p of this.parties) if (p.nonce > 0) await this.out.add('withdrawal_counters', [p.id, p.nonce, p.nonceSeq]);
    await this.out.add('vaults', [
      this.vaultOperator, `vault-contract-${this.opts.seed}`, fmt(this.totalDeposits), fmt(this.totalWithdrawals),
      fmt(this.totalDeposits - this.totalWithdrawals), this.parties.length, this.vaultSeq, this.ts(this.vaultSeq),
    ]);
  }
}
