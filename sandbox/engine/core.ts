/**
 * The in-memory engine: composes markets, books, accounts, triggers, sessions, the event log and
 * commitments, and exposes one method per API operation. Single-threaded; every method runs to
 * completion, so events of one request are contiguous in seq.
 */
import { Accounts, positionToWire, type AccountingFault } from './accounts.js';
import { Committer } from './commitments.js';
import { formatDec, parseDec } from './decimal.js';
import { EventLog, isoTime, type AppendInput } from './event-log.js';
import { IdSource } from './ids.js';
import { MarketRegistry, RESERVED_MARKET, priceOnGrid, sizeOnGrid, type MarketSpec } from './markets.js';
import { isPlainObject, Matcher, type PlaceResponse } from './matching.js';
import { OrderBook } from './orderbook.js';
import { OrderStore, orderToWire, type OrderState } from './orders.js';
import { HEX128_RE, HEX64_RE, MAX_SESSION_LIFETIME_MS, PARTY_RE, SessionStore, sessionAuthMessage, verifyEd25519 } from './sessions.js';
import { TriggerStore, triggerToWire, type TriggerState } from './triggers.js';
import { BadRequest, EngineReject, type EngineEvent, type RejectCode, type TriggerKind, type WireOrder } from './types.js';

export const CURRENT_VERSION = { version: 'c879f7f', buildDate: '2026-08-01' } as const;
export const LEGACY_VERSION = { version: '9a1e3b2', buildDate: '2026-05-10' } as const;

export interface EngineCoreOptions {
  markets?: MarketSpec[];
  /** Play a build older than the version floor (c879f7f). */
  legacy?: boolean;
  /** Events kept for SSE replay (default 100 000). */
  retention?: number;
  /** `hex` sends below_min_notional as `0x0C`. */
  rejectCodeStyle?: 'name' | 'hex';
  /** Clock in Unix ms (tests may inject one). */
  now?: () => number;
  /** A deliberate accounting fault, for tests of verifiers only (`ENGINE_CORRUPT`; accounts.ts). */
  fault?: AccountingFault | null;
}

type Fail = { ok: false; code: string; error: string };
export type HttpAnswer = { status: number; body: unknown };

interface PendingWithdrawal {
  withdrawalId: string;
  party: string;
  amount: bigint;
}

export class EngineCore {
  readonly log: EventLog;
  readonly markets: MarketRegistry;
  readonly books = new Map<string, OrderBook<OrderState>>();
  readonly accounts: Accounts;
  readonly triggers = new TriggerStore();
  readonly orders = new OrderStore();
  readonly ids = new IdSource();
  readonly sessions: SessionStore;
  readonly committer = new Committer();
  readonly matcher: Matcher;
  readonly lastPrice = new Map<string, bigint>();
  readonly legacy: boolean;
  readonly version: string;
  readonly buildDate: string;
  private readonly hexCodes: boolean;
  private readonly clock: () => number;
  private tickNo = 0;
  private readonly withdrawalQueue: PendingWithdrawal[] = [];
  private readonly withdrawalNonce = new Map<string, number>();

  constructor(opts: EngineCoreOptions = {}) {
    this.clock = opts.now ?? Date.now;
    this.legacy = opts.legacy === true;
    const v = this.legacy ? LEGACY_VERSION : CURRENT_VERSION;
    this.version = v.version;
    this.buildDate = v.buildDate;
    this.hexCodes = opts.rejectCodeStyle === 'hex';
    this.log = new EventLog(opts.retention ?? 100_000, this.clock);
    this.log.subscribe((e, json) => this.committer.observe(e, json));
    this.markets = new MarketRegistry(opts.markets);
    for (const m of this.markets.list) this.books.set(m.symbol, new OrderBook<OrderState>(m.symbol));
    this.accounts = new Accounts((sym) => this.markets.get(sym)!.maxLeverage, opts.fault ?? null);
    this.sessions = new SessionStore(this.clock);
    this.matcher = new Matcher({
      markets: this.markets,
      books: this.books,
      accounts: this.accounts,
      triggers: this.triggers,
      orders: this.orders,
      ids: this.ids,
      lastPrice: this.lastPrice,
      emit: (e) => this.emit(e),
      nowIso: () => this.nowIso(),
      code: (c) => this.code(c),
    });
  }

  now(): number {
    return this.clock();
  }

  nowIso(): string {
    return isoTime(this.clock());
  }

  emit(input: AppendInput): EngineEvent {
    return this.log.append(input);
  }

  code(c: RejectCode): string {
    return this.hexCodes && c === 'below_min_notional' ? '0x0C' : c;
  }

  private fail(code: RejectCode, error: string): Fail {
    return { ok: false, code: this.code(code), error };
  }

  healthz(): { ok: true; version: string; buildDate: string; maxSeq: number } {
    return { ok: true, version: this.version, buildDate: this.buildDate, maxSeq: this.log.maxSeq };
  }

  // ---- sessions ----------------------------------------------------------------------------

  sessionAuth(body: unknown): { ok: true; sessionId: string; expiresAt: number } | Fail {
    if (!isPlainObject(body)) throw new BadRequest('body must be a JSON object');
    const { party, sessionPublicKey, expiresAt, signature } = body;
    if (typeof party !== 'string' || !PARTY_RE.test(party)) throw new BadRequest('party must be <hint>::<64-hex ed25519 key>');
    if (typeof sessionPublicKey !== 'string' || !HEX64_RE.test(sessionPublicKey)) throw new BadRequest('sessionPublicKey must be 64 lowercase hex characters');
    if (typeof expiresAt !== 'number' || !Number.isSafeInteger(expiresAt)) throw new BadRequest('expiresAt must be an integer of Unix milliseconds');
    if (typeof signature !== 'string') throw new BadRequest('missing field: signature');
    if (!HEX128_RE.test(signature) || !verifyEd25519(this.sessions.partyKey(party), sessionAuthMessage(party, sessionPublicKey, expiresAt), signature)) {
      return this.fail('invalid_signature', 'party signature does not verify');
    }
    const now = this.clock();
    if (expiresAt <= now) return this.fail('session_expired', 'expiresAt is in the past');
    if (expiresAt - now > MAX_SESSION_LIFETIME_MS) throw new BadRequest('session lifetime exceeds 24 h');
    const s = this.sessions.create(party, sessionPublicKey, expiresAt);
    this.emit({
      kind: 'session.authorized',
      party,
      payload: { expiresAt: new Date(expiresAt).toISOString(), sessionId: s.sessionId, sessionPublicKey },
    });
    return { ok: true, sessionId: s.sessionId, expiresAt };
  }

  // ---- trading -----------------------------------------------------------------------------

  placeOrder(party: string, body: unknown): PlaceResponse {
    return this.matcher.place(party, body);
  }

  /** An order request whose session expired: rejected with an event, like other business rejections. */
  rejectOrderSessionExpired(party: string, body: unknown): Fail {
    const market = isPlainObject(body) && typeof body.market === 'string' ? body.market : undefined;
    const cid = isPlainObject(body) && typeof body.clientOrderId === 'string' ? body.clientOrderId : null;
    return this.matcher.reject(party, market, cid, new EngineReject('session_expired', 'session expired')) as Fail;
  }

  cancelOrder(party: string, orderId: string): ReturnType<Matcher['cancelByUser']> {
    return this.matcher.cancelByUser(party, orderId);
  }

  setTpsl(party: string, body: unknown): { ok: true; triggers: Array<{ triggerId: string; kind: TriggerKind; status: string }> } | Fail {
    if (!isPlainObject(body)) throw new BadRequest('body must be a JSON object');
    const { market } = body;
    if (typeof market !== 'string' || market.length === 0) throw new BadRequest('missing field: market');
    if (!('tp' in body) && !('sl' in body)) throw new BadRequest('give tp and/or sl');
    for (const k of ['tp', 'sl'] as const) {
      const leg = body[k];
      if (leg !== undefined && leg !== null && (!isPlainObject(leg) || !('triggerPrice' in leg))) {
        throw new BadRequest(`${k} must be null or an object with triggerPrice`);
      }
    }
    const m = this.markets.get(market);
    if (!m) return this.fail('market_unsupported', `unknown market ${market}`);
    const pos = this.accounts.position(party, market);
    if (!pos) return this.fail('no_position', `no open position in ${market}`);
    type LegSpec = { triggerPrice: bigint; limitPrice: bigint | null; size: bigint | null } | null;
    const specs: Partial<Record<TriggerKind, LegSpec>> = {};
    for (const k of ['tp', 'sl'] as const) {
      if (!(k in body) || body[k] === undefined) continue;
      const leg = body[k] as Record<string, unknown> | null;
      if (leg === null) {
        specs[k] = null;
        continue;
      }
      const triggerPrice = parseDec(leg.triggerPrice);
      if (triggerPrice === null || !priceOnGrid(m, triggerPrice)) return this.fail('invalid_price', `${k}.triggerPrice is off the price grid`);
      let limitPrice: bigint | null = null;
      if (leg.limitPrice !== undefined && leg.limitPrice !== null) {
        limitPrice = parseDec(leg.limitPrice);
        if (limitPrice === null || !priceOnGrid(m, limitPrice)) return this.fail('invalid_price', `${k}.limitPrice is off the price grid`);
      }
      let size: bigint | null = null;
      if (leg.size !== undefined && leg.size !== null) {
        size = parseDec(leg.size);
        if (size === null || !sizeOnGrid(m, size)) return this.fail('invalid_size', `${k}.size is off the size grid`);
      }
      specs[k] = { triggerPrice, limitPrice, size };
    }
    const out: Array<{ triggerId: string; kind: TriggerKind; status: string }> = [];
    for (const k of ['tp', 'sl'] as const) {
      if (!(k in specs)) continue;
      for (const t of this.triggers.armedForPosition(pos.positionId, market)) {
        if (t.kind === k && t.origin === 'position') {
          this.matcher.cancelTrigger(t);
          out.push({ triggerId: t.triggerId, kind: k, status: 'cancelled' });
        }
      }
      const spec = specs[k];
      if (!spec) continue;
      const t: TriggerState = {
        triggerId: this.ids.next('t'),
        party,
        market,
        kind: k,
        status: 'armed',
        triggerPrice: spec.triggerPrice,
        limitPrice: spec.limitPrice,
        size: spec.size,
        firedSize: null,
        firedLimit: null,
        positionId: pos.positionId,
        origin: 'position',
        parentOrderId: null,
        firedOrderId: null,
      };
      this.triggers.arm(t);
      this.emit({ kind: 'engine.trigger_set', market, party, payload: { trigger: triggerToWire(t) } });
      out.push({ triggerId: t.triggerId, kind: k, status: 'armed' });
    }
    return { ok: true, triggers: out };
  }

  userMe(party: string): Record<string, unknown> {
    return {
      ok: true,
      party,
      balance: formatDec(this.accounts.balance(party)),
      positions: this.accounts.openPositions(party).map(positionToWire),
      openOrders: this.orders.openFor(party).map(orderToWire),
      triggers: this.triggers.armedFor(party).map(triggerToWire),
    };
  }

  // ---- collateral --------------------------------------------------------------------------

  private checkPartyAmount(body: unknown): { party: string; amount: bigint; rest: Record<string, unknown> } {
    if (!isPlainObject(body)) throw new BadRequest('body must be a JSON object');
    const { party, amount } = body;
    if (typeof party !== 'string' || !PARTY_RE.test(party)) throw new BadRequest('party must be <hint>::<64-hex ed25519 key>');
    const a = parseDec(amount);
    if (a === null || a <= 0n) throw new BadRequest('amount must be a positive decimal string');
    return { party, amount: a, rest: body };
  }

  /** Credit collateral (admin deposit `chain`, or faucet). */
  deposit(body: unknown, source: 'chain' | 'faucet'): { ok: true; depositId: string; newBalance: string } {
    const { party, amount, rest } = this.checkPartyAmount(body);
    // A chain deposit carries the id of the chain transaction the on-chain projection records for
    // it (engine contract, commitments): without it the trader cannot match receipt and credit.
    let txId: string | null = null;
    if (source === 'chain') {
      if (typeof rest.txId !== 'string' || rest.txId.length === 0 || rest.txId.length > 128) throw new BadRequest('txId (the chain transaction id, 1 to 128 characters) is required for a chain deposit');
      txId = rest.txId;
    }
    // The `deposit` fault commits a chain deposit without crediting it (tests of verifiers only).
    const newBalance = formatDec(this.accounts.fault === 'deposit' && source === 'chain' ? this.accounts.balance(party) : this.accounts.credit(party, amount));
    const depositId = this.ids.next('d');
    this.emit({ kind: 'inbound.deposit', party, payload: { amount: formatDec(amount), depositId, newBalance, source, txId } });
    return { ok: true, depositId, newBalance };
  }

  requestWithdrawal(party: string, body: unknown): { ok: true; withdrawalId: string; nonce: number } {
    if (!isPlainObject(body)) throw new BadRequest('body must be a JSON object');
    const amount = parseDec(body.amount);
    if (amount === null || amount <= 0n) throw new BadRequest('amount must be a positive decimal string');
    const nonce = (this.withdrawalNonce.get(party) ?? 0) + 1;
    this.withdrawalNonce.set(party, nonce);
    const withdrawalId = this.ids.next('w');
    this.withdrawalQueue.push({ withdrawalId, party, amount });
    this.emit({ kind: 'inbound.withdrawal_request', party, payload: { amount: formatDec(amount), nonce, withdrawalId } });
    return { ok: true, withdrawalId, nonce };
  }

  // ---- periodic work -----------------------------------------------------------------------

  /** One matching cycle: engine.tick_start, then pending withdrawal decisions. */
  tick(): void {
    this.emit({ kind: 'engine.tick_start', payload: { tick: ++this.tickNo } });
    const queue = this.withdrawalQueue.splice(0);
    for (const w of queue) {
      if (w.amount <= this.accounts.freeCollateral(w.party)) {
        const newBalance = this.accounts.credit(w.party, -w.amount);
        this.emit({ kind: 'engine.approve_submitted', party: w.party, payload: { newBalance: formatDec(newBalance), withdrawalId: w.withdrawalId } });
      } else {
        this.emit({ kind: 'engine.reject_submitted', party: w.party, payload: { reason: 'insufficient_collateral', withdrawalId: w.withdrawalId } });
      }
    }
    if (this.tickNo % 10 === 0) this.sessions.prune();
  }

  /** Commit user batches and the global manifest (nothing when no party has new events). */
  commit(): void {
    const cut = this.committer.cut();
    if (!cut) return;
    for (const u of cut.users) {
      this.emit({
        kind: 'engine.user_batch_committed',
        party: u.party,
        payload: { eventCount: u.eventCount, prevRoot: u.prevRoot, root: u.root, userSeq: u.userSeq },
      });
    }
    const b = cut.batch;
    this.emit({
      kind: 'outbound.batch_committed',
      payload: { batchNum: b.batchNum, firstSeq: b.firstSeq, lastSeq: b.lastSeq, prevRoot: b.prevRoot, root: b.root, userBatchCount: b.userBatchCount },
    });
  }

  // ---- reads -------------------------------------------------------------------------------

  orderbook(market: string | undefined, depth: number): HttpAnswer {
    const sym = market ?? this.markets.first().symbol;
    const book = this.books.get(sym);
    if (!book) return { status: 400, body: { ok: false, code: 'market_unsupported', error: `unknown market ${sym}` } };
    const fmt = (levels: Array<[bigint, bigint]>): Array<[string, string]> => levels.map(([p, s]) => [formatDec(p), formatDec(s)]);
    return { status: 200, body: { market: sym, seq: book.seq, depth, bids: fmt(book.depth('buy', depth)), asks: fmt(book.depth('sell', depth)) } };
  }

  /** GET /v1/admin/users/:party/orders — version-dependent handling of `market`. */
  adminOrders(party: string, market: string | undefined): HttpAnswer {
    let filter: string | undefined;
    if (this.legacy) {
      if (market === RESERVED_MARKET) {
        return { status: 400, body: { ok: false, code: 'market_unsupported', error: 'market "all" is not supported by this engine version' } };
      }
      filter = market;
    } else {
      if (market === undefined || market === '') {
        return { status: 400, body: { ok: false, code: 'market_required', error: 'query parameter market is required (a symbol or all)' } };
      }
      filter = market === RESERVED_MARKET ? undefined : market;
    }
    if (filter !== undefined && !this.markets.get(filter)) {
      return { status: 400, body: { ok: false, code: 'market_unsupported', error: `unknown market ${filter}` } };
    }
    const orders: WireOrder[] = this.orders.openFor(party, filter).map(orderToWire);
    return { status: 200, body: { orders } };
  }
}
