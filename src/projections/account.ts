// The account as a trader sees it (docs/account.md): a pure reducer over engine events that keeps,
// per party, what the engine's margin check counts (docs/engine.md "Accounts"):
//   collateral        the party's cash balance: `newBalance` of its latest deposit, approved
//                     withdrawal or fill leg, whichever has the greatest seq;
//   positions         one open epoch per market (size, entry price) from the fill legs;
//   open orders       resting orders and the opening size their margin was reserved for.
// and, for every market, the mark (the price of the market's latest match).
//
// Everything is keyed by seq, so the state merges with a database seed (mergeSeed) in any order:
// for each entity (balance, a market's position, an order, a mark) the version with the greater
// seq wins. A party is `complete` once a seed is merged: before that the memory holds only the
// changes seen since the gateway started (deltas of orders placed earlier, tombstones), which the
// seed completes.
//
// Order margin, as the engine reserves it: when a limit gtc/alo order that is not reduce-only comes
// to rest, after its own taker matches, `opening = max(0, remaining − reducible)` (reducible: the
// part of the party's position on the other side) is reserved at `opening × price / maxLeverage`;
// a maker fill caps the reservation at `remaining × price / maxLeverage`. So the reservation is
// `IM(min(opening, remaining) × price)`. Matching a taker is contiguous in the event stream (its
// order_placed, then only its own fills), so `opening` is read from the position when the first
// event that is not one of its fills arrives; until then it is computed from the current position.
//
// The reducer mutates the state it is given and returns it (one owner, no copies per event); it
// does no I/O and reads no clock.
import { divDecimal, divRound, formatDecimal, mulDecimal, parseDecimal } from '../decimal.js';
import { asFill } from './fill.js';
import type { Static } from 'typebox';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { AccountBody, AccountOrder, AccountPosition } from '../contracts/account-wire.js';
import { reducible, type AccountSeed } from '../contracts/account-seed.js';

export { reducible, type AccountSeed };

export interface AccountPosition {
  positionId: string;
  /** Signed size; 0 marks a closed epoch (a tombstone until pruned). */
  size: bigint;
  entryPrice: bigint;
  realizedPnl: bigint;
  seq: number;
}

export interface AccountOrder {
  orderId: string;
  market: string;
  side: 'buy' | 'sell';
  /** Limit price; null for a market order. */
  price: bigint | null;
  remaining: bigint;
  /** The engine reserves margin for it once it rests (limit gtc/alo, not reduce-only). */
  rests: boolean;
  /** The opening size reserved at rest; null while the order is still matching as a taker. */
  opening: bigint | null;
  /**
   * false when the opening was fixed while the memory did not know the party's position in the
   * market (an incomplete party): the seed decides it then.
   */
  openingKnown: boolean;
  seq: number;
}

/** What the memory knows of an order placed before it began (from a database seed later). */
export interface OrderDelta {
  /** Fill leg sizes seen, by seq. */
  fills: Array<{ seq: number; size: bigint }>;
  /** Seq of the event that ended it (cancel or last fill), if seen. */
  endedSeq: number | null;
}

export interface PartyAccount {
  complete: boolean;
  /** The seq of the seed merged (0 before): events up to it are already in the seed. */
  seededAt: number;
  balance: { value: bigint; seq: number } | null;
  /** market → the open epoch (or a closed one, size 0). */
  positions: Map<string, AccountPosition>;
  orders: Map<string, AccountOrder>;
  /** Orders placed before the memory began: deltas until a seed completes them. */
  deltas: Map<string, OrderDelta>;
  /** Terminal orders of an incomplete party (a seed may still list them as open): orderId → seq. */
  ended: Map<string, number>;
}

export interface Mark {
  price: bigint;
  seq: number;
}

export interface AccountsState {
  parties: Map<string, PartyAccount>;
  marks: Map<string, Mark>;
  /** market → maxLeverage. */
  leverage: Map<string, number>;
  /** Orders still matching as takers (their opening is not fixed yet): orderId → party. */
  matching: Map<string, string>;
  /** The newest event seq applied. */
  head: number;
}

export function initialAccounts(): AccountsState {
  return { parties: new Map(), marks: new Map(), leverage: new Map(), matching: new Map(), head: 0 };
}

function emptyParty(): PartyAccount {
  return { complete: false, seededAt: 0, balance: null, positions: new Map(), orders: new Map(), deltas: new Map(), ended: new Map() };
}

function partyOf(state: AccountsState, party: string): PartyAccount {
  let p = state.parties.get(party);
  if (!p) state.parties.set(party, (p = emptyParty()));
  return p;
}

const dec = (v: unknown): bigint | null => {
  if (typeof v !== 'string') return null;
  try {
    return parseDecimal(v);
  } catch {
    return null;
  }
};

function setBalance(p: PartyAccount, value: bigint | null, seq: number): void {
  if (value === null) return;
  if (!p.balance || p.balance.seq <= seq) p.balance = { value, seq };
}

function positionSize(p: PartyAccount, market: string): bigint {
  return p.positions.get(market)?.size ?? 0n;
}

/** Fixes the opening size of every order still matching, except `except` (its matching goes on). */
function settleMatching(state: AccountsState, except: string | null): void {
  for (const [orderId, party] of state.matching) {
    if (orderId === except) continue;
    state.matching.delete(orderId);
    const p = state.parties.get(party);
    const o = p?.orders.get(orderId);
    if (!p || !o || o.opening !== null) continue;
    const open = o.remaining - reducible(positionSize(p, o.market), o.side);
    o.opening = open > 0n ? open : 0n;
    o.openingKnown = p.complete || p.positions.has(o.market);
  }
}

/** true when the party's seed already holds what an event of this seq says. */
function inSeed(p: PartyAccount | undefined, seq: number): boolean {
  return p !== undefined && p.complete && seq <= p.seededAt;
}

function endOrder(p: PartyAccount, orderId: string, seq: number): void {
  p.orders.delete(orderId);
  if (!p.complete) {
    p.ended.set(orderId, seq);
    p.deltas.delete(orderId);
  }
}

/**
 * Applies one engine event. Returns the parties whose account changed and the markets whose mark
 * changed (an account holding a position there changed too).
 */
export function applyAccountEvent(state: AccountsState, event: EngineEvent, filled = asFill(event)): { parties: Set<string>; markets: Set<string> } {
  const parties = new Set<string>();
  const markets = new Set<string>();
  if (event.seq <= state.head) return { parties, markets };
  state.head = event.seq;
  const payload = event.payload;
  switch (event.kind) {
    case 'inbound.deposit':
    case 'engine.approve_submitted':
      if (event.party) {
        setBalance(partyOf(state, event.party), dec(payload.newBalance), event.seq);
        parties.add(event.party);
      }
      break;
    case 'engine.order_placed': {
      settleMatching(state, null);
      const o = payload.order as Record<string, unknown> | undefined;
      const party = event.party ?? (typeof o?.party === 'string' ? o.party : undefined);
      const size = dec(o?.size);
      if (!o || !party || typeof o.orderId !== 'string' || typeof o.market !== 'string' || size === null) break;
      if (o.side !== 'buy' && o.side !== 'sell') break;
      if (inSeed(state.parties.get(party), event.seq)) break;
      const filled = dec(o.filledSize) ?? 0n;
      const rests = o.type === 'limit' && o.tif !== 'ioc' && o.reduceOnly !== true;
      const order: AccountOrder = {
        orderId: o.orderId,
        market: o.market,
        side: o.side,
        price: o.type === 'limit' ? dec(o.price) : null,
        remaining: size - filled,
        rests,
        opening: rests ? null : 0n,
        openingKnown: true,
        seq: event.seq,
      };
      partyOf(state, party).orders.set(order.orderId, order);
      if (rests) state.matching.set(order.orderId, party);
      parties.add(party);
      break;
    }
    case 'engine.order_cancelled':
      if (event.party && typeof payload.orderId === 'string') {
        state.matching.delete(payload.orderId);
        const p = partyOf(state, event.party);
        if (inSeed(p, event.seq)) break;
        endOrder(p, payload.orderId, event.seq);
        parties.add(event.party);
      }
      break;
    case 'engine.trigger_fired':
      settleMatching(state, null);
      break;
    case 'engine.order_filled': {
      const fill = filled;
      if (!fill) break;
      settleMatching(state, fill.takerOrderId);
      const market = event.market!;
      for (const leg of fill.legs) {
        const p = partyOf(state, leg.party);
        if (inSeed(p, event.seq)) continue;
        parties.add(leg.party);
        setBalance(p, parseDecimal(leg.newBalance), event.seq);
        p.positions.set(market, {
          positionId: leg.positionId,
          size: parseDecimal(leg.positionSize),
          entryPrice: parseDecimal(leg.entryPrice),
          realizedPnl: parseDecimal(leg.realizedPnl),
          seq: event.seq,
        });
        const size = parseDecimal(leg.size);
        const order = p.orders.get(leg.orderId);
        if (order) {
          order.remaining -= size;
          order.seq = event.seq;
          if (order.remaining <= 0n) {
            state.matching.delete(order.orderId);
            endOrder(p, order.orderId, event.seq);
          }
        } else if (!p.complete && !p.ended.has(leg.orderId)) {
          let d = p.deltas.get(leg.orderId);
          if (!d) p.deltas.set(leg.orderId, (d = { fills: [], endedSeq: null }));
          d.fills.push({ seq: event.seq, size });
        }
      }
      const price = parseDecimal(fill.price);
      const mark = state.marks.get(market);
      if (!mark || mark.seq < event.seq) {
        state.marks.set(market, { price, seq: event.seq });
        if (!mark || mark.price !== price) markets.add(market);
      }
      break;
    }
  }
  return { parties, markets };
}

// ---- database seed ---------------------------------------------------------------------------

/** Merges a seed into the party's memory (the greater seq wins per entity); the party is then complete. */
export function mergeSeed(state: AccountsState, party: string, seed: AccountSeed): void {
  const p = partyOf(state, party);
  for (const l of seed.leverage) state.leverage.set(l.market, l.maxLeverage);
  for (const m of seed.marks) {
    const cur = state.marks.get(m.market);
    if (!cur || cur.seq < m.seq) state.marks.set(m.market, { price: parseDecimal(m.price), seq: m.seq });
  }
  if (p.complete) return;
  if (seed.balance) setBalance(p, parseDecimal(seed.balance.value), seed.balance.seq);
  for (const row of seed.positions) {
    const cur = p.positions.get(row.market);
    if (cur && cur.seq >= row.updatedSeq) continue;
    p.positions.set(row.market, {
      positionId: row.positionId,
      size: parseDecimal(row.size),
      entryPrice: parseDecimal(row.entryPrice),
      realizedPnl: parseDecimal(row.realizedPnl),
      seq: row.updatedSeq,
    });
  }
  const listed = new Set(seed.orders.map((r) => r.orderId));
  // A remembered order the seed does not list although it is as recent: it ended in what the seed saw.
  for (const [id, o] of p.orders) if (!listed.has(id) && o.seq <= seed.asOfSeq) p.orders.delete(id);
  for (const row of seed.orders) {
    const mine = p.orders.get(row.orderId);
    if (mine && mine.seq >= row.updatedSeq) continue; // the memory's copy is as recent (and its opening exact)
    if (mine && mine.opening !== null && mine.openingKnown) {
      // The seed saw fills the memory missed (they are in the seed now): its remaining, the memory's opening.
      mine.remaining = parseDecimal(row.remaining);
      mine.seq = row.updatedSeq;
      continue;
    }
    const ended = p.ended.get(row.orderId);
    if (ended !== undefined && ended > row.updatedSeq) continue;
    let remaining = parseDecimal(row.remaining);
    // The fills the seed did not see yet: the order is as of the newest of them (as the live path keeps it).
    let seq = row.updatedSeq;
    for (const f of p.deltas.get(row.orderId)?.fills ?? []) {
      if (f.seq <= row.updatedSeq) continue;
      remaining -= f.size;
      if (f.seq > seq) seq = f.seq;
    }
    if (remaining <= 0n) continue;
    p.orders.set(row.orderId, {
      orderId: row.orderId,
      market: row.market,
      side: row.side,
      price: row.price === null ? null : parseDecimal(row.price),
      remaining,
      rests: row.rests,
      // Exact even if the order was still matching in the snapshot (SeedOrder.opening): a seed
      // older than the memory must not leave it to events the memory has already applied.
      opening: parseDecimal(row.opening),
      openingKnown: true,
      seq,
    });
  }
  // Openings fixed without the position: the seed's figure, or the position the seed gives (no
  // fill of the party in that market reached the memory before the order rested).
  const rows = new Map(seed.orders.map((r) => [r.orderId, r]));
  for (const o of p.orders.values()) {
    if (o.openingKnown || o.opening === null) continue;
    const row = rows.get(o.orderId);
    o.opening = row ? parseDecimal(row.opening) : maxZero(o.remaining - reducible(positionSize(p, o.market), o.side));
    o.openingKnown = true;
  }
  for (const [market, pos] of p.positions) if (pos.size === 0n) p.positions.delete(market);
  p.deltas.clear();
  p.ended.clear();
  p.complete = true;
  p.seededAt = seed.asOfSeq;
}

/**
 * Forgets what incomplete parties' memories hold at or below `seq`: a seed read later is at least
 * that recent and says it too. Complete parties keep everything (they have no seed to come).
 */
export function pruneIncomplete(state: AccountsState, seq: number): void {
  for (const [party, p] of state.parties) {
    if (p.complete) continue;
    if (p.balance && p.balance.seq <= seq) p.balance = null;
    for (const [market, pos] of p.positions) if (pos.seq <= seq) p.positions.delete(market);
    for (const [id, o] of p.orders) if (o.seq <= seq && !state.matching.has(id)) p.orders.delete(id);
    for (const [id, d] of p.deltas) {
      d.fills = d.fills.filter((f) => f.seq > seq);
      if (d.fills.length === 0) p.deltas.delete(id);
    }
    for (const [id, s] of p.ended) if (s <= seq) p.ended.delete(id);
    if (!p.balance && p.positions.size === 0 && p.orders.size === 0 && p.deltas.size === 0 && p.ended.size === 0) state.parties.delete(party);
  }
}

// ---- the view ----------------------------------------------------------------------------------

// The view's types are the wire schema's (src/contracts/account-wire.ts): one description of the
// account, for the route, the frame, the OpenAPI document and this reducer.
export type PositionView = Static<typeof AccountPosition>;
export type OrderMarginView = Static<typeof AccountOrder>;
export type AccountView = Static<typeof AccountBody>;

/** Initial margin of a notional at a market's maximum leverage, rounded as the engine does. */
export function initialMargin(notional: bigint, maxLeverage: number): bigint {
  return divRound(notional, BigInt(maxLeverage));
}

const abs = (v: bigint): bigint => (v < 0n ? -v : v);

/** The account of one party as of the state's head. Unknown leverage counts as 1 (never understates). */
export function accountView(state: AccountsState, party: string): AccountView {
  const p = state.parties.get(party) ?? emptyParty();
  const leverageOf = (market: string): number | null => state.leverage.get(market) ?? null;
  const positions: PositionView[] = [];
  let positionMargin = 0n;
  let upnl = 0n;
  let notionalSum = 0n;
  for (const [market, pos] of [...p.positions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (pos.size === 0n) continue;
    const mark = state.marks.get(market);
    const markPrice = mark?.price ?? pos.entryPrice;
    const lev = leverageOf(market);
    const im = initialMargin(mulDecimal(abs(pos.size), pos.entryPrice), lev ?? 1);
    const notional = mulDecimal(abs(pos.size), markPrice);
    const u = mulDecimal(markPrice - pos.entryPrice, pos.size);
    positionMargin += im;
    upnl += u;
    notionalSum += notional;
    positions.push({
      positionId: pos.positionId,
      market,
      size: formatDecimal(pos.size),
      entryPrice: formatDecimal(pos.entryPrice),
      markPrice: formatDecimal(markPrice),
      markSource: mark ? 'last_trade' : 'entry_price',
      notional: formatDecimal(notional),
      unrealizedPnl: formatDecimal(u),
      realizedPnl: formatDecimal(pos.realizedPnl),
      initialMargin: formatDecimal(im),
      maxLeverage: lev,
      asOfSeq: pos.seq,
    });
  }
  const orders: OrderMarginView[] = [];
  let orderMargin = 0n;
  for (const o of [...p.orders.values()].sort((a, b) => a.seq - b.seq || (a.orderId < b.orderId ? -1 : 1))) {
    let margin = 0n;
    if (o.rests && o.price !== null) {
      const opening = o.opening ?? maxZero(o.remaining - reducible(positionSize(p, o.market), o.side));
      margin = initialMargin(mulDecimal(opening < o.remaining ? opening : o.remaining, o.price), leverageOf(o.market) ?? 1);
    }
    orderMargin += margin;
    orders.push({
      orderId: o.orderId,
      market: o.market,
      side: o.side,
      price: o.price === null ? null : formatDecimal(o.price),
      remaining: formatDecimal(o.remaining),
      margin: formatDecimal(margin),
    });
  }
  const collateral = p.balance?.value ?? 0n;
  const equity = collateral + upnl;
  const used = positionMargin + orderMargin;
  return {
    party,
    asOfSeq: Math.max(state.head, p.seededAt),
    collateral: formatDecimal(collateral),
    collateralAsOfSeq: p.balance?.seq ?? null,
    positions,
    orders,
    positionMargin: formatDecimal(positionMargin),
    orderMargin: formatDecimal(orderMargin),
    unrealizedPnl: formatDecimal(upnl),
    equity: formatDecimal(equity),
    freeCollateral: formatDecimal(collateral - used),
    leverage: notionalSum === 0n ? formatDecimal(0n) : equity > 0n ? formatDecimal(divDecimal(notionalSum, equity)) : null,
    marginUsage: used === 0n ? formatDecimal(0n) : collateral > 0n ? formatDecimal(divDecimal(used, collateral)) : null,
  };
}

function maxZero(v: bigint): bigint {
  return v > 0n ? v : 0n;
}

/** Whether a party's account is complete (seeded) in this state. */
export function isComplete(state: AccountsState, party: string): boolean {
  return state.parties.get(party)?.complete === true;
}
