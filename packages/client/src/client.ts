// Typed methods for every REST route of docs/client.md. Party-scoped routes and trading calls are signed
// with the current session (when there is none they go unsigned, which a gateway with
// AUTH_DISABLED=true accepts and any other answers with a 401 GatewayError).
import { Clock } from './clock.js';
import { verifyHistory, type HistoryOptions, type HistoryVerdict } from './verify/history.js';
import { verifyAccount, type AccountOptions, type AccountVerdict } from './verify/verify-account.js';
import { workerSender, type VerifyWorker } from './verify/worker-sender.js';
import type { ProofPageBytes } from './verify/proof-page.js';
import { GatewayError } from './errors.js';
import { defaultRetry, type RetryPolicy } from './retry.js';
import { prepareSession, Session, type PartySigner } from './signing.js';
import { fetchSender, Transport, type Sender, type SessionRenewer } from './transport.js';
import { requireDecimalStrings } from './decimal-input.js';
import { outcomeUnknown, settleByClientOrderId } from './unknown-outcome.js';
import { attachedWouldFire, tpslWouldFire, type Account, type TriggerCheck, type TriggerWouldFire } from './account.js';
import type {
  AccountAsOf,
  Answer,
  Balance,
  Batch,
  Candle,
  CandleInterval,
  Deposit,
  EngineEvent,
  FaucetGrant,
  FaucetStatus,
  Fill,
  Health,
  List,
  ManifestVerification,
  Market,
  Order,
  OrderAccepted,
  OrderCancelled,
  Orderbook,
  OrderRequest,
  OrderStatus,
  Position,
  Readiness,
  Rejection,
  ServerTime,
  SessionCreated,
  TpslRequest,
  TpslSet,
  Trigger,
  Trade,
  PnlHistory,
  TradeHistoryItem,
  TriggerStatus,
  UserBatch,
  UserBatchProof,
  UserMe,
  UserBatchVerification,
  Vault,
  VerificationStatus,
  Withdrawal,
  WithdrawalCounter,
  WithdrawalStatus,
} from './types.js';

export interface ClientOptions {
  /** Gateway base URL, e.g. `https://gateway.example` (no trailing slash needed). */
  baseUrl: string;
  retry?: Partial<RetryPolicy>;
  fetch?: typeof fetch;
  /**
   * Retry `POST /v1/orders` on network errors and 5xx too (default false): a 502/504 or a dropped
   * connection can hide an order the engine accepted, and a retry would place it twice. Reconcile
   * through `clientOrderId` in `listUserOrders` instead, or opt in here.
   */
  retryOrders?: boolean;
  /**
   * How long placeOrder keeps asking for an order by its clientOrderId after an answer that leaves
   * its outcome unknown (network error, 502, 504, a 503 without a gateway code), while the gateway
   * knows no such order yet (default 3 000 ms; docs/client.md "Errors and retries").
   */
  unknownOutcomeWaitMs?: number;
  /**
   * Local clock (ms). Signatures use it plus the offset learnt from the gateway (`syncTime()`, or
   * the `serverTime` of a 401 for a timestamp outside the ±30 s window, after which the call is
   * signed again once), so a device clock that is off still signs valid calls.
   */
  now?: () => number;
  /**
   * Session-expiry hook: called when the session has expired (by the corrected clock) before a
   * signed call or a stream connect, or when the gateway answers "session expired". Answer a new
   * Session (e.g. `(await client.createSession(signer)).session`, or sign again with a wallet), or
   * null to go on unsigned (the call then fails with a 401 GatewayError).
   */
  onSessionExpired?: SessionRenewer;
  /** How long `listMarkets()` answers from memory (ms, default 30 000; 0 disables the cache). */
  marketsCacheMs?: number;
  /**
   * A worker running `@gateway/client/verify-worker`, or a function that starts one (called when
   * the first verification begins): verifyHistory and verifyAccount then have each page of
   * proofs fetched and its events hashed there, off the page's main thread, which only parses and
   * checks (ADR 0385, docs/verification.md "A worker for the pages"). Same verdicts; a worker that
   * cannot start, does not say its protocol within 10 s, or fails, leaves its pages to the main
   * thread. Those pages are fetched with the worker's own `fetch`, not the `fetch` option.
   */
  verifyWorker?: VerifyWorker | (() => VerifyWorker);
}

export interface Page {
  limit?: number;
}

/** Sends a call another way than HTTP: `stream.sender` carries place and cancel over the stream's socket (StreamClient.placeOrder). */
export interface Via {
  sender?: Sender;
}
const via = (options: Via): { sender?: Sender } => (options.sender ? { sender: options.sender } : {});
const enc = encodeURIComponent;

/** An engine business refusal that came as an HTTP 4xx (`{ok:false, code}` passed through), as the value placeOrder returns. */
function engineRefusal(err: unknown): Rejection | null {
  if (!(err instanceof GatewayError) || err.status < 400 || err.status >= 500) return null;
  const body = err.body as { ok?: unknown; code?: unknown; error?: unknown };
  if (body.ok !== false || typeof body.code !== 'string') return null;
  return { ok: false, code: body.code, error: typeof body.error === 'string' ? body.error : body.code };
}

export class GatewayClient {
  readonly transport: Transport;
  readonly clock: Clock;
  private readonly retryOrders: boolean;
  private readonly unknownOutcomeWaitMs: number;
  private readonly marketsCacheMs: number;
  private markets: { at: number; value: Promise<List<Market>> } | null = null;
  /** How the pages of proofs are sent: through the verification worker when one is given. */
  private readonly pageVia: { sender?: Sender & { start(): void } };

  constructor(options: ClientOptions) {
    this.clock = new Clock(options.now ?? Date.now);
    const sender = fetchSender(options.fetch);
    this.transport = new Transport(options.baseUrl.replace(/\/+$/, ''), { ...defaultRetry, ...options.retry }, sender, this.clock);
    this.pageVia = options.verifyWorker ? { sender: workerSender(options.verifyWorker, sender) } : {};
    this.transport.renewSession = options.onSessionExpired ?? null;
    this.retryOrders = options.retryOrders ?? false;
    this.unknownOutcomeWaitMs = options.unknownOutcomeWaitMs ?? 3_000;
    this.marketsCacheMs = options.marketsCacheMs ?? 30_000;
  }

  /** The gateway's time as this client estimates it (local clock + learnt offset). */
  now(): number {
    return this.clock.now();
  }

  get session(): Session | null {
    return this.transport.session;
  }
  set session(session: Session | null) {
    this.transport.session = session;
  }

  // ---- session ----

  /**
   * Creates an ephemeral session key, has the party sign `session-auth\n…`, and registers it with
   * the engine. On success the session signs every later call; a rejection is returned as a value.
   */
  async createSession(signer: PartySigner, lifetimeMs = 60 * 60 * 1000): Promise<Answer<SessionCreated> & { session?: Session }> {
    const prepared = await prepareSession(signer, lifetimeMs, this.clock.now());
    const answer = await this.transport.call<Answer<SessionCreated>>({ method: 'POST', path: '/v1/session-auth', body: prepared.body });
    if (!answer.ok) return answer;
    const session = new Session(signer.party, answer.sessionId, answer.expiresAt, prepared.key.privateKey, () => this.clock.now());
    this.session = session;
    return { ...answer, session };
  }

  // ---- trading ----

  /**
   * A TP/SL attached to the order that would fire at once on its limit price is refused as a value
   * (`trigger_would_fire`, nothing signed or sent) unless `allowImmediateTrigger`.
   * An order with a `clientOrderId` whose answer leaves its outcome unknown (a network error after
   * sending, 502, 504, a 503 without a gateway code) is looked up by that id before placeOrder
   * answers: its real outcome, or a GatewayError `order_outcome_unknown` when no gateway knows it.
   */
  async placeOrder<const M extends string>(order: OrderRequest<M>, options: TriggerCheck & Via = {}): Promise<Answer<OrderAccepted> | TriggerWouldFire> {
    requireDecimalStrings(order, ['size', 'price'], ['tp', 'sl']);
    const refused = options.allowImmediateTrigger ? null : attachedWouldFire(order);
    if (refused) return refused;
    try {
      return await this.transport.call({ method: 'POST', path: '/v1/orders', body: order, signed: true, ...(this.retryOrders ? {} : { retries: 0 }), ...via(options) });
    } catch (err) {
      const party = this.session?.party;
      if (!order.clientOrderId || !party || !outcomeUnknown(err)) throw err;
      return settleByClientOrderId(this.transport, err, { party, clientOrderId: order.clientOrderId, waitMs: this.unknownOutcomeWaitMs });
    }
  }
  cancelOrder(orderId: string, options: Via = {}): Promise<Answer<OrderCancelled>> {
    return this.transport.call({ method: 'DELETE', path: `/v1/orders/${enc(orderId)}`, signed: true, ...via(options) });
  }
  /**
   * A TP or SL that would fire at once on the position's mark price (the last trade: what the
   * engine fires on), or on `currentPrice`, is refused as a value (`trigger_would_fire`, nothing
   * signed or sent) unless `allowImmediateTrigger`. The position is read from `getAccount`.
   */
  async setTpsl(request: TpslRequest, options: TriggerCheck & { currentPrice?: string } = {}): Promise<Answer<TpslSet> | TriggerWouldFire> {
    requireDecimalStrings(request, [], ['tp', 'sl']);
    const party = this.session?.party;
    if (!options.allowImmediateTrigger && party && (request.tp || request.sl)) {
      const refused = tpslWouldFire(request, await this.getAccount(party), options.currentPrice);
      if (refused) return refused;
    }
    return this.transport.call({ method: 'POST', path: '/v1/tpsl', body: request, signed: true });
  }
  /**
   * The party as the engine sees it (balance, positions, open orders, triggers). Works in browsers:
   * the signed GET (body `{"party"}`) is sent as `POST /v1/user/me`, which the gateway forwards to
   * the engine as that GET. Needs a session.
   */
  getUserMe(): Promise<Answer<UserMe>> {
    const session = this.session;
    if (!session) throw new Error('getUserMe needs a session: call createSession first');
    return this.transport.call({ method: 'POST', signAs: 'GET', path: '/v1/user/me', body: { party: session.party }, signed: true });
  }
  /**
   * The order book. An engine refusal (an unknown market: `market_unsupported`) is returned as a
   * value `{ok:false, code, error}`, as placeOrder does; gateway and transport errors (a bad
   * `depth`, an engine that is down) are thrown as GatewayErrors, as everywhere.
   */
  async getOrderbook(query: { depth?: number; market?: string } = {}): Promise<Answer<Orderbook>> {
    try {
      const book = await this.transport.call<Orderbook>({ method: 'GET', path: '/v1/orderbook', query });
      return { ok: true, ...book };
    } catch (err) {
      const refusal = engineRefusal(err);
      if (refusal) return refusal;
      throw err;
    }
  }

  // ---- markets and candles ----

  /** Every market with its trading rules and 24 h statistics; cached for `marketsCacheMs`. */
  listMarkets(options: { fresh?: boolean } = {}): Promise<List<Market>> {
    const at = this.clock.localNow();
    if (!options.fresh && this.markets && at - this.markets.at < this.marketsCacheMs) return this.markets.value;
    const value = this.transport.call<List<Market>>({ method: 'GET', path: '/v1/markets' });
    this.markets = { at, value };
    value.catch(() => {
      if (this.markets?.value === value) this.markets = null; // never cache a failure
    });
    return value;
  }
  getMarket(symbol: string): Promise<Market> {
    return this.transport.call({ method: 'GET', path: `/v1/markets/${enc(symbol)}` });
  }
  /**
   * Candle history, ascending by `openTs`: the `limit` most recent bars of [from, to). Page back
   * by passing `nextCursor` as `to`. A closed bar equals its `candle.close` frame, the current bar
   * the latest `candle.update`, so live frames continue the history without a seam.
   */
  listCandles(query: { market: string; interval: CandleInterval; from?: number; to?: number; limit?: number }): Promise<List<Candle>> {
    return this.transport.call({ method: 'GET', path: '/v1/candles', query });
  }

  // ---- system ----

  /** `GET /v1/time`: the gateway clock. */
  serverTime(): Promise<ServerTime> {
    return this.transport.call({ method: 'GET', path: '/v1/time' });
  }
  /** Reads the gateway clock and corrects signatures by the measured offset; answers the offset (ms). */
  async syncTime(): Promise<number> {
    const sentAt = this.clock.localNow();
    const { serverTime } = await this.serverTime();
    this.clock.learn(serverTime, sentAt, this.clock.localNow());
    return this.clock.offsetMs;
  }

  health(): Promise<Health> {
    return this.transport.call({ method: 'GET', path: '/healthz' });
  }
  /** Note: a degraded gateway answers 503, raised as a GatewayError whose body is the report. */
  ready(): Promise<Readiness> {
    return this.transport.call({ method: 'GET', path: '/readyz', retries: 0 });
  }

  // ---- vault ----

  getVault(): Promise<Vault> {
    return this.transport.call({ method: 'GET', path: '/v1/vault' });
  }
  listVaults(): Promise<List<Vault>> {
    return this.transport.call({ method: 'GET', path: '/v1/vaults' });
  }
  getOperatorVault(operator: string): Promise<Vault> {
    return this.transport.call({ method: 'GET', path: `/v1/vaults/${enc(operator)}` });
  }

  // ---- collateral ----

  listDeposits(query: Page & { user?: string; before?: number } = {}): Promise<List<Deposit>> {
    return this.transport.call({ method: 'GET', path: '/v1/deposits', query });
  }
  listWithdrawals(query: Page & { user?: string; status?: WithdrawalStatus } = {}): Promise<List<Withdrawal>> {
    return this.transport.call({ method: 'GET', path: '/v1/withdrawals', query });
  }
  listUserDeposits(party: string, query: Page & { before?: number } = {}): Promise<List<Deposit>> {
    return this.party(party, '/deposits', query);
  }
  listUserWithdrawals(party: string, query: Page & { status?: WithdrawalStatus } = {}): Promise<List<Withdrawal>> {
    return this.party(party, '/withdrawals', query);
  }
  getWithdrawalCounter(party: string): Promise<WithdrawalCounter> {
    return this.party(party, '/withdrawal-counter');
  }

  // ---- batches ----

  listBatches(query: Page = {}): Promise<List<Batch>> {
    return this.transport.call({ method: 'GET', path: '/v1/batches', query });
  }
  getBatch(batchNum: number): Promise<Batch> {
    return this.transport.call({ method: 'GET', path: `/v1/batches/${batchNum}` });
  }
  listAllUserBatches(query: Page = {}): Promise<List<UserBatch>> {
    return this.transport.call({ method: 'GET', path: '/v1/user-batches', query });
  }
  listUserBatches(party: string, query: Page = {}): Promise<List<UserBatch>> {
    return this.party(party, '/user-batches', query);
  }
  /** The proof of one user batch: its events, the chain record and the path (check it with verifyUserBatch). */
  getUserBatchProof(party: string, userSeq: number): Promise<UserBatchProof> {
    return this.party(party, `/user-batches/${userSeq}/proof`);
  }
  /**
   * The proofs of the party's recorded user batches after userSeq `since`, oldest first: at most
   * `limit` (1..100, default 100) a page, and a page ends once it holds 10 000 events; pass
   * `nextCursor` back as `since`. Each is the proof getUserBatchProof answers.
   */
  listUserBatchProofs(party: string, query: { since?: number; limit?: number } = {}): Promise<List<UserBatchProof>> {
    return this.transport.call({ method: 'GET', path: `/v1/users/${enc(party)}/user-batches/proofs`, signed: true, query });
  }
  /**
   * The same page as listUserBatchProofs, as the bytes the gateway sent, scanned by the
   * verification worker when there is one: verifyHistory reads it a proof at a time (ADR 0386).
   */
  getUserBatchProofPage(party: string, query: { since?: number; limit?: number } = {}): Promise<ProofPageBytes> {
    return this.transport.callBytes({ method: 'GET', path: `/v1/users/${enc(party)}/user-batches/proofs`, signed: true, query, ...this.pageVia });
  }
  /**
   * Verifies every user batch of `party` against the chain, in this process (SHA-256 in WebAssembly or JavaScript, ADR 0370):
   * each proof with verifyUserBatch, and the chain of batches (docs/verification.md). The proofs
   * come a page at a time (getUserBatchProofPage), one by one from a gateway without that route.
   */
  verifyHistory(party: string, options: HistoryOptions = {}): Promise<HistoryVerdict> {
    // The verification worker (if any) loads while the batches are listed.
    this.pageVia.sender?.start();
    return verifyHistory(this, party, options);
  }

  /**
   * Verifies the party's balance and positions from what the chain committed (docs/verification.md
   * "Your account"): verifyHistory, then every committed event replayed by the engine's published
   * rules, deposits and withdrawals matched, and the result compared with the account view.
   */
  verifyAccount(party: string, options: AccountOptions = {}): Promise<AccountVerdict> {
    this.pageVia.sender?.start();
    return verifyAccount(this, party, options);
  }

  // ---- engine mirror ----

  listOrders(query: Page & { user?: string; market?: string; status?: OrderStatus } = {}): Promise<List<Order>> {
    return this.transport.call({ method: 'GET', path: '/v1/orders', query });
  }
  listFills(query: Page & { user?: string; market?: string; before?: number } = {}): Promise<List<Fill>> {
    return this.transport.call({ method: 'GET', path: '/v1/fills', query });
  }
  /** Public trades of one market (one per match, taker side), newest first: a trade tape's history before the live `trade` frames. */
  listTrades(query: Page & { market: string; before?: number }): Promise<List<Trade>> {
    return this.transport.call({ method: 'GET', path: '/v1/trades', query });
  }
  listUserOrders(party: string, query: Page & { market?: string; status?: OrderStatus } = {}): Promise<List<Order>> {
    return this.party(party, '/orders', query);
  }
  listUserTriggers(party: string, query: Page & { market?: string; status?: TriggerStatus } = {}): Promise<List<Trigger>> {
    return this.party(party, '/triggers', query);
  }
  listUserFills(party: string, query: Page & { market?: string; before?: number } = {}): Promise<List<Fill>> {
    return this.party(party, '/fills', query);
  }
  /** `status`: open (default), closed (archived epochs) or all. Key positions by `positionId`. */
  listUserPositions(party: string, query: Page & { status?: 'open' | 'closed' | 'all' } = {}): Promise<List<Position>> {
    return this.party(party, '/positions', query);
  }
  /** The spec's balance: `newBalance` of the last fill (deposits and withdrawals after it are not in it; see getAccount). */
  getBalance(party: string): Promise<Balance> {
    return this.party(party, '/balance');
  }
  /** Collateral (every deposit, withdrawal and fill), positions at the mark, margin, equity, free collateral, leverage (docs/account.md). */
  getAccount(party: string): Promise<Account> {
    return this.party(party, '/account');
  }
  /** Profit and loss over time: equity, realized and unrealized PnL, fees, cumulative (docs/rest.md "PnL history"); `from`/`to` in ms. */
  getUserPnl(party: string, query: { interval?: CandleInterval; from?: number; to?: number } = {}): Promise<PnlHistory> {
    return this.party(party, '/pnl', query);
  }
  /** Fill legs newest first, each with its realized PnL and the cumulative realized PnL and fees up to it (docs/rest.md "Trade history"). */
  listUserTradeHistory(party: string, query: Page & { market?: string; before?: number } = {}): Promise<List<TradeHistoryItem>> {
    return this.party(party, '/trade-history', query);
  }
  /**
   * Collateral and open positions as the mirror recorded them at seq <= `seq` (no margin, mark or
   * order): what verifyAccount compares with a commitment. A seq beyond the mirror is a 409
   * GatewayError, code `not_yet_indexed`, with `head`.
   */
  getAccountAsOf(party: string, seq: number): Promise<AccountAsOf> {
    return this.party(party, '/account/as-of', { seq });
  }
  /** Testnet top-up. 429 (cooldown, `retryAfterS`) and 403 (ceiling) are raised as GatewayErrors. */
  faucet(party: string): Promise<FaucetGrant | Rejection> {
    return this.transport.call({ method: 'POST', path: `/v1/users/${enc(party)}/faucet`, signed: true, retries: 0 });
  }
  /** The faucet's cooldown for the party: `retryAfterS` 0 when a top-up is allowed now (a screen disables its button until then). */
  faucetStatus(party: string): Promise<FaucetStatus> {
    return this.transport.call({ method: 'GET', path: `/v1/users/${enc(party)}/faucet`, signed: true });
  }


  // ---- verifications ----

  listUserBatchVerifications(query: Page & { status?: VerificationStatus; user?: string } = {}): Promise<List<UserBatchVerification>> {
    return this.transport.call({ method: 'GET', path: '/v1/verifications/user-batches', query });
  }
  listManifestVerifications(query: Page & { status?: VerificationStatus } = {}): Promise<List<ManifestVerification>> {
    return this.transport.call({ method: 'GET', path: '/v1/verifications/manifests', query });
  }

  // ---- events ----

  listEvents(query: Page & { since?: number; type?: string; user?: string; market?: string } = {}): Promise<List<EngineEvent>> {
    return this.transport.call({ method: 'GET', path: '/v1/events', query });
  }

  /** Every mirror event after `since`, page by page until `nextCursor` is null. */
  async *eventsSince(since: number, query: Page & { type?: string; user?: string; market?: string } = {}): AsyncGenerator<EngineEvent> {
    let cursor: number | null = since;
    while (cursor !== null) {
      const page: List<EngineEvent> = await this.listEvents({ limit: 1000, ...query, since: cursor });
      yield* page.items;
      cursor = page.nextCursor;
    }
  }

  private party<T>(party: string, suffix: string, query?: object): Promise<T> {
    return this.transport.call<T>({ method: 'GET', path: `/v1/users/${enc(party)}${suffix}`, signed: true, ...(query ? { query } : {}) });
  }
}
