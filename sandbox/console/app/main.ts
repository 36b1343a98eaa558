// The reference web console: a trading screen built only on the published client
// (`@gateway/client`) and the public API. Plain DOM, no framework (docs/adr/0017-web-console-plain-dom.md).
//
// Start-up: clock sync (GET /v1/time), markets with 24 h stats, a party kept in IndexedDB with its
// session (made and funded by the faucet on the first visit), then ONE stream connection (the client's
// LiveConnection) carrying three watches: the selected market's book (`orderbook.delta`: snapshot
// then deltas, with the chosen depth and grouping), its public frames (trades, candles), and the
// party's own (account, positions, and the user channels `order.update` and `fill`). Switching
// market, interval or grouping changes the watches, which the connection turns into subscribe /
// unsubscribe messages on the same socket; so does switching party (the header's select of the
// parties kept in this browser, or "New party"). Each watch's state on subscribe arrives as snapshot
// frames, so a quiet market still shows its book, last trades and current bar at once.
import {
  GatewayClient,
  GatewayError,
  indexedDbStore,
  keepPartySession,
  LiveConnection,
  memoryStore,
  UserFillsStore,
  UserOrdersStore,
  type Frame,
  type Market,
  type StreamMessage,
  type KeyValueStore,
  type StreamState,
  type Watch,
  type OrderRequest,
  type OrderAccepted,
  type Account,
  type Trigger,
  type CandleInterval,
  CANDLE_INTERVALS,
  formatDecimal,
  formatMoney,
  readableDecimals,
} from '@gateway/client';

function asInterval(value: string | null): CandleInterval {
  return (CANDLE_INTERVALS as readonly string[]).includes(value ?? '') ? (value as CandleInterval) : '1m';
}
import { CandleChart } from './chart.js';
import { escapeHtml, money, pct, px, setMarkets, shortParty, sz } from './format.js';
import { checkOrder, describeRules } from './rules.js';
import { currentAccount, renderAccount, renderClosedEpochs, renderTicket, renderTriggers } from './account.js';
import { renderPositions as renderPositionTable } from './positions.js';
import { orderFrom, baseSize, type TicketFields } from './ticket.js';
import { PnlPanel } from './pnl.js';
import { VerificationPanel } from './verification.js';
import { AccountVerificationPanel } from './account-verification.js';
import { BookPanel, groupingsFor, type BookProbe } from './book.js';
import { mountDeskActions } from './desk-actions.js';
import { TradeTape } from './tape.js';
import { renderFills, renderOpenOrders, renderOrderHistory, type SentOrder } from './my-orders.js';
import { closeOrder, describeClose } from './close.js';
import { FaucetButton } from './faucet-button.js';
import { socketFirstOrderPath, type OrderPath, type PathName } from './order-path.js';

/** Timings read by the benchmark and the browser test (ms since navigation start). */
interface ConsoleMetrics {
  firstFrameMs: number | null;
  bookRenderMs: number | null;
  chartRenderMs: number | null;
  firstRenderMs: number | null;
  ready: boolean;
  /** The book panel's subscription: view, bookSeq held, resubscriptions. */
  book: BookProbe | null;
  /** The way the last order call went. */
  lastPath: PathName | null;
}
const metrics: ConsoleMetrics = { firstFrameMs: null, bookRenderMs: null, chartRenderMs: null, firstRenderMs: null, ready: false, book: null, lastPath: null };
(window as unknown as { __console: ConsoleMetrics }).__console = metrics;

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const input = (id: string) => $<HTMLInputElement>(id).value.trim();

function painted(key: 'bookRenderMs' | 'chartRenderMs'): void {
  if (metrics[key] !== null) return;
  requestAnimationFrame(() => {
    metrics[key] ??= performance.now();
    if (metrics.bookRenderMs !== null && metrics.chartRenderMs !== null) metrics.firstRenderMs ??= Math.max(metrics.bookRenderMs, metrics.chartRenderMs);
  });
}

function showError(err: unknown): void {
  const text = readableDecimals(err instanceof GatewayError ? `${err.status || 'network'} ${err.code ?? ''}: ${err.body.error}` : err instanceof Error ? err.message : String(err));
  $('error').textContent = text;
}

const params = new URLSearchParams(location.search);
const config = (await (await fetch('./config.json')).json()) as { gateway: string };
// Verifications fetch and hash their pages of proofs in a worker, started when the first one runs (ADR 0385).
const client = new GatewayClient({
  baseUrl: params.get('gateway') ?? config.gateway,
  retry: { retries: 2 },
  verifyWorker: () => new Worker('./verify-worker.js', { name: 'verify' }),
});

// ---- state ----
let markets: Market[] = [];
let selected = params.get('market') ?? '';
let interval: CandleInterval = asInterval(params.get('interval'));
let party = '';
const orders = new UserOrdersStore();
const fills = new UserFillsStore();
let marketWatch: Watch | null = null;
let partyWatch: Watch | null = null;
let store: KeyValueStore = memoryStore();
/** Open interest per market from open_interest.update (newer than the REST list's, which is cached). */
const liveOi = new Map<string, { seq: number; value: string }>();
const openInterestOf = (m: Market): string => liveOi.get(m.symbol)?.value ?? m.openInterest;
// Orders and cancels go over the connection's socket while it is open, REST otherwise.
let liveState: StreamState = 'stopped';
const live = new LiveConnection({
  client,
  onState: (state) => {
    liveState = state;
    renderStatus(state);
    renderStatus(state, 'party-status');
  },
  onRefused: showError,
  onError: (err) => console.warn('stream', err),
});
(window as unknown as { __live: LiveConnection }).__live = live;
const chart = new CandleChart($('chart'));
const tape = new TradeTape($('trades'));
const bookPanel = new BookPanel(client, live, $('book'), $<HTMLSelectElement>('book-group'), $<HTMLSelectElement>('book-depth'), {
  // A click on a level: a limit order at that price (the exact decimal, trailing zeros dropped).
  onPrice: (price) => {
    $<HTMLSelectElement>('order-type').value = 'limit';
    $<HTMLInputElement>('order-price').value = formatDecimal(price, 10);
    updateTicket();
  },
  onPainted: () => {
    metrics.firstFrameMs ??= performance.now();
    painted('bookRenderMs');
  },
  onError: (err) => console.warn('book stream', err),
  onRefused: showError,
});
metrics.book = bookPanel.probe;
const orderPath: OrderPath = socketFirstOrderPath(client, () => live.client, () => liveState === 'live' || liveState === 'backfilling');
const market = () => markets.find((m) => m.symbol === selected);

// ---- rendering ----
function renderStatus(state: StreamState, id = 'status'): void {
  const el = $(id);
  el.textContent = state;
  el.className = `pill ${state}`;
}

function renderMarkets(): void {
  const rows = markets.map((m) => {
    const s = m.stats24h;
    const cls = s.change === null ? '' : s.change.startsWith('-') ? 'sell' : 'buy';
    return `<tr class="market${m.symbol === selected ? ' sel' : ''}" data-symbol="${escapeHtml(m.symbol)}" data-testid="market" title="24 h volume ${formatMoney(s.quoteVolume, { decimals: 0, thousands: ',' })} USD · open interest ${sz(m.symbol, openInterestOf(m))}"><td>${escapeHtml(m.symbol)}</td><td>${px(m.symbol, s.last ?? m.lastTrade?.price)}</td><td class="${cls}">${pct(s.changePct)}</td></tr>`;
  });
  $('markets').innerHTML = `<tr><th>Market</th><th>Last</th><th>24h</th></tr>${rows.join('')}`;
  // The header: the selected market's last price, 24 h change and open interest.
  const m = market();
  $('sel-market').textContent = m?.symbol ?? '…';
  $('sel-last').textContent = px(m?.symbol, m?.stats24h.last ?? m?.lastTrade?.price);
  $('sel-change').textContent = pct(m?.stats24h.changePct);
  $('sel-change').className = m?.stats24h.change?.startsWith('-') ? 'sell' : 'buy';
  $('sel-oi').textContent = m ? sz(m.symbol, openInterestOf(m)) : '–';
}

/** Orders this page sent, by clientOrderId (a rejection shows what was sent, not "unknown"). */
const sent = new Map<string, SentOrder>();

function renderOrders(): void {
  renderOpenOrders($('orders'), orders.open());
  renderOrderHistory($('order-history'), orders.recent(), sent);
}

function renderPositions(): void {
  renderPositionTable($('positions'), currentAccount());
}

function renderBalance(balance: string): void {
  $('balance').textContent = money(balance);
}

// ---- data ----
async function refreshMarkets(fresh = false): Promise<void> {
  markets = (await client.listMarkets({ fresh })).items;
  setMarkets(markets);
  if (!market()) selected = markets[0]?.symbol ?? '';
  renderMarkets();
  const m = market();
  if (m) $('rules').textContent = describeRules(m);
}

/**
 * The party's account (collateral with every deposit, withdrawal and fill; margin, equity, free
 * collateral, leverage), then live from account.update frames.
 */
async function loadBalance(): Promise<void> {
  const shown = party;
  const account = await client.getAccount(shown);
  if (shown === party) onAccount(account); // a switch to another party while it was read drops it
}

function onAccount(account: Account): void {
  renderAccount(account);
  renderPositions();
  updateTicket();
  renderTriggers(triggers);
}

let triggers: Trigger[] = [];
let pnlPanel: PnlPanel | null = null;
let historyTimers: Array<ReturnType<typeof setTimeout>> = [];
/**
 * Triggers and closed epochs, read again when the stream says they changed. They are REST lists of
 * the indexer's mirror, which may trail the stream (more so on a loaded machine): read at 150 ms,
 * then again at 1 s and 3 s, so a close the first read missed still shows without another event.
 * A newer change restarts the schedule.
 */
function refreshHistorySoon(): void {
  for (const timer of historyTimers) clearTimeout(timer);
  historyTimers = [150, 1_000, 3_000].map((ms) => setTimeout(() => void refreshHistory(), ms));
}
async function refreshHistory(): Promise<void> {
  try {
    void pnlPanel?.refresh().catch(showError);
    const [t, closed] = await Promise.all([client.listUserTriggers(party, { limit: 50 }), client.listUserPositions(party, { status: 'closed', limit: 20 })]);
    triggers = t.items;
    renderTriggers(triggers);
    renderClosedEpochs(closed.items);
  } catch (err) {
    showError(err);
  }
}

function ticketFields(): TicketFields {
  return {
    side: $<HTMLSelectElement>('order-side').value as 'buy' | 'sell',
    type: $<HTMLSelectElement>('order-type').value as 'limit' | 'market',
    tif: $<HTMLSelectElement>('order-tif').value as 'gtc' | 'ioc' | 'alo',
    reduceOnly: $<HTMLInputElement>('order-reduce').checked,
    size: input('order-size'),
    unit: $<HTMLSelectElement>('order-size-unit').value as 'base' | 'quote',
    price: input('order-price'),
    tp: input('order-tp'),
    sl: input('order-sl'),
  };
}

function updateTicket(): void {
  const f = ticketFields();
  // A market order has no price of its own (it takes the book) and never rests.
  const priceInput = $<HTMLInputElement>('order-price');
  priceInput.disabled = f.type === 'market';
  priceInput.placeholder = f.type === 'market' ? 'market' : 'click a book level';
  $<HTMLSelectElement>('order-tif').disabled = f.type === 'market';
  const button = $('order-submit');
  button.className = f.side;
  button.textContent = `${f.side === 'buy' ? 'Buy / long' : 'Sell / short'} ${selected}`;
  const m = market();
  const price = f.type === 'limit' ? f.price : bestPrice(f.side);
  const size = m ? baseSize(m, f, price) : null;
  renderTicket(m, { side: f.side, size: size ?? '', price, reduceOnly: f.reduceOnly });
}

/** The party's account (positions included: the table is drawn from it) and its histories. */
async function refreshPartyState(): Promise<void> {
  await Promise.all([loadBalance(), refreshHistory()]);
}

async function loadChart(): Promise<void> {
  const history = await client.listCandles({ market: selected, interval: interval as '1m', limit: 300 });
  chart.setHistory(history.items);
  $('chart-title').textContent = `${selected} ${interval}`;
  if (chart.bars > 0) painted('chartRenderMs');
}

/** The tape's history (one record per match); the stream's last trades on subscribe merge with it by seq. */
async function loadTape(): Promise<void> {
  const market = selected;
  tape.load(market, (await client.listTrades({ market, limit: 50 })).items);
}

function onMarketMessage(message: StreamMessage): void {
  if (message.source !== 'live') return;
  metrics.firstFrameMs ??= performance.now();
  const frame: Frame = message.frame;
  switch (frame.kind) {
    case 'trade':
      if (!tape.apply(frame) || frame.snapshot) break;
      // The last price moves with every trade; the rest of the 24 h figures at the next refresh.
      if (market()) {
        market()!.stats24h.last = frame.payload.price;
        renderMarkets();
      }
      break;
    case 'open_interest.update': {
      // The header's figure, live; a frame older than the one held (a snapshot behind a live frame) is dropped.
      const held = liveOi.get(frame.market);
      if (held && held.seq > frame.seq) break;
      liveOi.set(frame.market, { seq: frame.seq, value: frame.payload.openInterest });
      renderMarkets();
      break;
    }
    case 'candle.update':
    case 'candle.close':
      chart.apply(frame.payload);
      if (chart.bars > 0) painted('chartRenderMs');
      break;
  }
}

function onPartyMessage(message: StreamMessage): void {
  if (message.source !== 'live') return;
  const frame = message.frame;
  if (frame.kind === 'account.update') {
    onAccount(frame.payload);
  } else if (frame.kind === 'order.update') {
    if (orders.apply(frame)) renderOrders();
  } else if (frame.kind === 'fill') {
    if (fills.apply(frame)) {
      renderFills($('fills'), fills.list());
      if (!frame.snapshot) refreshHistorySoon();
    }
  } else if (frame.kind === 'position.update') {
    // The table follows account.update (one mark with the header); an epoch that closed changes the histories.
    if (/^-?0\.0+$/.test(frame.payload.size)) refreshHistorySoon(); // an epoch closed
  } else if (frame.kind === 'balance.update' || frame.kind === 'inbound.deposit') {
    // The collateral comes with account.update (the last fill's balance alone misses deposits and withdrawals).
  } else if (frame.kind.startsWith('engine.trigger_')) {
    refreshHistorySoon();
  } else if (frame.kind === 'engine.user_batch_committed') {
    // A new commitment of the party's events: "Verify my history" is verified again.
    verification?.committed(frame.payload.userSeq);
  }
}

/** Another market: book, tape, chart and stream again; another interval (`sameMarket`): the chart and the market stream only. */
function selectMarket(sameMarket = false): void {
  marketWatch?.close();
  const shown = market();
  if (!sameMarket) bookPanel.show(selected, shown ? (price) => groupingsFor(shown, price) : undefined, shown?.stats24h.last ?? shown?.lastTrade?.price ?? null);
  // The URL follows the market and the interval (a reload or a shared link opens the same screen).
  const url = new URL(location.href);
  url.searchParams.set('market', selected);
  url.searchParams.set('interval', interval);
  history.replaceState(null, '', url);
  document.title = `${selected} · Gateway console`;
  renderIntervals();
  updateTicket();
  tape.reset(selected);
  renderMarkets();
  const m = market();
  if (m) $('rules').textContent = describeRules(m);
  void Promise.all([loadChart(), loadTape()]).catch(showError);
  marketWatch = live.watch(
    { kinds: ['trade', 'open_interest.update', 'candle.update', 'candle.close'], markets: [selected], intervals: [interval] },
    {
      onMessage: onMarketMessage,
      onError: showError,
      onReset: () => {
        tape.reset(selected);
        void Promise.all([loadChart(), loadTape()]).catch(showError);
      },
    },
  );
}

function startPartyStream(): void {
  // My orders and my fills come from the user channels (each with its state on subscribe); the
  // party's positions may be in any market, so this watch names none.
  partyWatch = live.watch(
    { kinds: ['account.update', 'position.update', 'balance.update', 'inbound.deposit', 'order.update', 'fill', 'engine.trigger_set', 'engine.trigger_fired', 'engine.trigger_cancelled', 'engine.user_batch_committed'], party: [party] },
    {
      onMessage: onPartyMessage,
      onError: showError,
      onReset: () => {
        orders.clear();
        fills.clear();
        renderOrders();
        renderFills($('fills'), fills.list());
        void refreshPartyState().catch(showError);
      },
    },
  );
}

function bestPrice(side: 'buy' | 'sell'): string | null {
  const best = bookPanel.best();
  return (side === 'buy' ? best.ask : best.bid) ?? market()?.stats24h.last ?? null;
}

// ---- actions ----
function showPath(path: PathName): void {
  metrics.lastPath = path;
  $('order-path').textContent = `via ${path}`;
}

$('order-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void (async () => {
    const out = $('order-result');
    const m = market();
    if (!m) return;
    const f = ticketFields();
    const reference = bestPrice(f.side);
    const clientOrderId = `console-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const order = orderFrom(m, f, reference, clientOrderId);
    const problem = typeof order === 'string' ? order : checkOrder(m, { type: f.type, size: order.size, price: f.price, reference });
    if (problem || typeof order === 'string') {
      out.className = 'msg err';
      out.textContent = problem ?? String(order);
      return;
    }
    sent.set(clientOrderId, { side: order.side, size: order.size, price: order.type === 'limit' ? order.price : null });
    out.className = 'msg';
    out.textContent = 'sending…';
    await send(order, $<HTMLInputElement>('order-force').checked);
  })();
});

/** Sends an order (the ticket's, or a position's close) and shows the answer (`describe`: in the caller's words). */
async function send(order: OrderRequest, allowImmediateTrigger: boolean, describe?: (answer: OrderAccepted) => string): Promise<void> {
  const out = $('order-result');
  try {
    const { answer, path } = await orderPath.place(order, { allowImmediateTrigger });
    showPath(path);
    if (answer.ok && describe) {
      out.className = /^0(\.0*)?$/.test(answer.filledSize) ? 'msg err' : 'msg ok';
      out.textContent = `${describe(answer)} (${answer.orderId})`;
    } else if (answer.ok) {
      out.className = 'msg ok';
      out.textContent = `${answer.status}: ${answer.orderId}${answer.avgPrice ? ` @ ${px(order.market, answer.avgPrice)}` : ''}`;
    } else {
      out.className = 'msg err';
      out.textContent = `rejected: ${answer.code} — ${readableDecimals(answer.error)}`;
    }
  } catch (err) {
    out.className = 'msg err';
    out.textContent = readableDecimals(err instanceof GatewayError ? `${err.status} ${err.code ?? ''}: ${err.body.error}` : String(err));
  }
}

// Close: a reduce-only market order for the whole position, the other way, no worse than 1 % from the mark (close.ts).
$('positions').addEventListener('click', (ev) => {
  const button = (ev.target as HTMLElement).closest<HTMLElement>('button[data-close]');
  const m = markets.find((x) => x.symbol === button?.dataset.close);
  const size = button?.dataset.size;
  const mark = button?.dataset.mark;
  if (!m || !size || !mark) return;
  const order = closeOrder(m, { size, markPrice: mark });
  $('order-result').className = 'msg';
  $('order-result').textContent = 'closing…';
  void send(order, true, (answer) => describeClose(order, answer, (v) => px(m.symbol, v)));
});

mountDeskActions({ client, orders, table: $('orders'), out: $('order-result'), openStream: () => (live.client && (liveState === 'live' || liveState === 'backfilling') ? live.client : null) });

$('orders').addEventListener('click', (ev) => {
  const id = (ev.target as HTMLElement).dataset.cancel;
  if (!id) return;
  void (async () => {
    const out = $('order-result');
    try {
      const { answer, path } = await orderPath.cancel(id);
      showPath(path);
      out.className = answer.ok ? 'msg ok' : 'msg err';
      out.textContent = answer.ok ? `cancelled ${answer.orderId}` : `cancel rejected: ${answer.code} — ${readableDecimals(answer.error)}`;
    } catch (err) {
      showError(err);
    }
  })();
});

$('tpsl-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void (async () => {
    const out = $('tpsl-result');
    const tp = input('tpsl-tp');
    const sl = input('tpsl-sl');
    try {
      const answer = await client.setTpsl(
        { market: selected, ...(tp ? { tp: { triggerPrice: tp } } : {}), ...(sl ? { sl: { triggerPrice: sl } } : {}) },
        { allowImmediateTrigger: $<HTMLInputElement>('tpsl-force').checked },
      );
      out.className = answer.ok ? 'msg ok' : 'msg err';
      out.textContent = answer.ok ? `armed: ${answer.triggers.map((t) => `${t.kind} ${t.status}`).join(', ')}` : `rejected: ${answer.code} — ${readableDecimals(answer.error)}`;
    } catch (err) {
      out.className = 'msg err';
      out.textContent = readableDecimals(err instanceof GatewayError ? `${err.status} ${err.code ?? ''}: ${err.body.error}` : String(err));
    }
  })();
});

for (const id of ['order-side', 'order-type', 'order-size', 'order-price', 'order-tif', 'order-reduce', 'order-size-unit']) $(id).addEventListener('input', updateTicket);

const faucetButton = new FaucetButton(client, $<HTMLButtonElement>('faucet'), showError);
$('faucet').addEventListener('click', () => {
  $<HTMLButtonElement>('faucet').disabled = true;
  void client
    .faucet(party)
    .then(
      (answer) => ('newBalance' in answer ? renderBalance(answer.newBalance) : showError(new Error(`faucet: ${answer.code}`))),
      (err: unknown) => showError(err),
    )
    .finally(() => void faucetButton.refresh());
});

$('markets').addEventListener('click', (ev) => {
  const row = (ev.target as HTMLElement).closest<HTMLElement>('tr[data-symbol]');
  if (!row?.dataset.symbol || row.dataset.symbol === selected) return;
  selected = row.dataset.symbol;
  selectMarket();
});

$<HTMLSelectElement>('interval').value = interval;
$('interval').addEventListener('change', () => {
  interval = asInterval($<HTMLSelectElement>('interval').value);
  selectMarket(true);
});
/** The chart's intervals as buttons (every interval the gateway's candles have). */
function renderIntervals(): void {
  $('interval-buttons').innerHTML = CANDLE_INTERVALS.map((i) => `<button type="button" data-interval="${i}"${i === interval ? ' class="sel"' : ''}>${i}</button>`).join('');
}
$('interval-buttons').addEventListener('click', (ev) => {
  const next = (ev.target as HTMLElement).dataset.interval;
  if (!next || next === interval) return;
  interval = asInterval(next);
  $<HTMLSelectElement>('interval').value = interval;
  selectMarket(true);
});

// ---- parties ----
/** The hints of the parties made in this browser, kept beside their keys (the switcher lists them). */
const HINTS_KEY = 'console:hints';
let verification: VerificationPanel | null = null;
let accountVerification: AccountVerificationPanel | null = null;

/**
 * Trades as the party kept under `hint` (made, with its session, if new; funded by the faucet while
 * it holds nothing). The old party's watch is closed and the new one's opened on the same
 * connection — an unsubscribe and a subscribe proven with the new session, never a second socket —
 * and every party-scoped panel is emptied and read again for the new party.
 */
async function openParty(hint: string): Promise<void> {
  partyWatch?.close();
  partyWatch = null;
  // Reads scheduled for the old party would go out with the new party's session (403): drop them.
  for (const timer of historyTimers) clearTimeout(timer);
  historyTimers = [];
  const kept = await keepPartySession(client, store, hint);
  // The client now signs as the new party: every panel reads the new party from here on.
  party = kept.signer.party;
  if (pnlPanel) pnlPanel.party = party;
  if (verification) verification.party = party;
  if (accountVerification) accountVerification.party = party;
  const hints = (await store.get<string[]>(HINTS_KEY)) ?? [];
  if (!hints.includes(hint)) await store.set(HINTS_KEY, [...hints, hint]);
  await renderParties(hint);
  const url = new URL(location.href);
  url.searchParams.set('hint', hint);
  history.replaceState(null, '', url);
  orders.clear();
  fills.clear();
  sent.clear();
  triggers = [];
  await refreshPartyState();
  // The user channel's snapshot holds the open orders only: the history (a filled order) comes from REST.
  orders.load((await client.listUserOrders(party, { limit: 50 })).items);
  // A party made in this browser starts with nothing: fund it once from the faucet.
  if ((await client.getAccount(party)).collateral === '0.0000000000') {
    const grant = await client.faucet(party).catch((err: unknown) => (showError(err), null));
    if (grant && 'newBalance' in grant) renderBalance(grant.newBalance);
    await loadBalance();
  }
  faucetButton.party = party;
  void faucetButton.refresh();
  renderOrders();
  renderFills($('fills'), fills.list());
  startPartyStream();
  // The trader's history: PnL over time and trade history, read again a moment after each fill.
  pnlPanel ??= new PnlPanel(client, party, $('pnl-chart'), $('pnl-summary'), $('trade-history'), $<HTMLSelectElement>('pnl-interval'));
  (window as unknown as { __pnl: PnlPanel }).__pnl = pnlPanel;
  void pnlPanel.refresh().catch(showError);
  // The party's fills and history, checked against the chain in this browser (docs/verification.md).
  verification ??= new VerificationPanel(client, party, $('verify-panel'));
  void verification.run();
  // Its collateral and positions, recomputed from the committed events beside what the screen shows (on demand).
  // Its result may be newer than the history panel's (the chain moved since): that one is verified again.
  accountVerification ??= new AccountVerificationPanel(client, party, $('account-verify-panel'), () => void verification?.run());
}

async function renderParties(current: string): Promise<void> {
  const hints = (await store.get<string[]>(HINTS_KEY)) ?? [current];
  const options = await Promise.all(
    hints.map(async (hint) => {
      const stored = await store.get<{ party: string }>(`party:${hint}`);
      const label = stored ? shortParty(stored.party) : hint;
      return `<option value="${escapeHtml(hint)}"${hint === current ? ' selected' : ''} title="${escapeHtml(stored?.party ?? hint)}">${escapeHtml(label)}</option>`;
    }),
  );
  $('party').innerHTML = options.join('');
  $('party').title = party;
}

let switching = false;
async function switchParty(hint: string): Promise<void> {
  if (switching) return;
  switching = true;
  $<HTMLSelectElement>('party').disabled = true;
  $<HTMLButtonElement>('new-party').disabled = true;
  try {
    await openParty(hint);
  } catch (err) {
    showError(err);
  } finally {
    switching = false;
    $<HTMLSelectElement>('party').disabled = false;
    $<HTMLButtonElement>('new-party').disabled = false;
  }
}
$('party').addEventListener('change', () => void switchParty($<HTMLSelectElement>('party').value));
$('new-party').addEventListener('click', () => void switchParty(`console-${Date.now().toString(36)}`));

// ---- start ----
try {
  // The clock sync (a device clock that is off still signs valid calls) runs while the public
  // market loads: only the party's signed calls need it.
  const synced = client.syncTime().catch(() => 0);
  await refreshMarkets();
  selectMarket();
  await synced;
  try {
    store = indexedDbStore('gateway-console');
  } catch {
    store = memoryStore();
  }
  await openParty(params.get('hint') ?? 'console');
  setInterval(() => void refreshMarkets(true).catch(showError), 15_000);
  metrics.ready = true;
} catch (err) {
  showError(err);
}
