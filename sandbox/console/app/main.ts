// The reference web console: a trading screen built only on the published client
// (`@gateway/client`) and the public API. Plain DOM, no framework (docs/adr/0017-web-console-plain-dom.md).
//
// Start-up: clock sync (GET /v1/time), markets with 24 h stats, a party kept in IndexedDB with its
// session (made and funded by the faucet on the first visit), then three streams: the selected
// market's book (`orderbook.delta`: snapshot then deltas, with the chosen depth and grouping), its
// public frames (trades, candles), and the party's own (account, positions, and the user channels
// `order.update` and `fill`). Each stream's state on subscribe arrives as snapshot frames, so a
// quiet market still shows its book, last trades and current bar at once.
import {
  GatewayClient,
  GatewayError,
  indexedDbStore,
  keepPartySession,
  memoryStore,
  PositionsStore,
  StreamClient,
  UserFillsStore,
  UserOrdersStore,
  type Frame,
  type Market,
  type StreamMessage,
  type StreamState,
  type OrderRequest,
  type Account,
  type Trigger,
  type CandleInterval,
  CANDLE_INTERVALS,
} from '@gateway/client';

function asInterval(value: string | null): CandleInterval {
  return (CANDLE_INTERVALS as readonly string[]).includes(value ?? '') ? (value as CandleInterval) : '1m';
}
import { CandleChart } from './chart.js';
import { escapeHtml, pct, shortParty, trim } from './format.js';
import { checkOrder, describeRules } from './rules.js';
import { positionMarks, renderAccount, renderClosedEpochs, renderTicket, renderTriggers } from './account.js';
import { VerificationPanel } from './verification.js';
import { AccountVerificationPanel } from './account-verification.js';
import { BookPanel, type BookProbe } from './book.js';
import { TradeTape } from './tape.js';
import { renderFills, renderOpenOrders, renderOrderHistory } from './my-orders.js';
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
  const text = err instanceof GatewayError ? `${err.status || 'network'} ${err.code ?? ''}: ${err.body.error}` : err instanceof Error ? err.message : String(err);
  $('error').textContent = text;
}

const params = new URLSearchParams(location.search);
const config = (await (await fetch('./config.json')).json()) as { gateway: string };
const client = new GatewayClient({ baseUrl: params.get('gateway') ?? config.gateway, retry: { retries: 2 } });

// ---- state ----
let markets: Market[] = [];
let selected = params.get('market') ?? '';
let interval: CandleInterval = asInterval(params.get('interval'));
let party = '';
let positions: PositionsStore;
const orders = new UserOrdersStore();
const fills = new UserFillsStore();
let marketStream: StreamClient | null = null;
let partyStream: StreamClient | null = null;
const chart = new CandleChart($('chart'));
const tape = new TradeTape($<HTMLTableElement>('trades'));
const bookPanel = new BookPanel(client, $<HTMLTableElement>('book'), $<HTMLSelectElement>('book-group'), $<HTMLSelectElement>('book-depth'), {
  onPainted: () => {
    metrics.firstFrameMs ??= performance.now();
    painted('bookRenderMs');
  },
  onError: (err) => console.warn('book stream', err),
  onRefused: showError,
});
metrics.book = bookPanel.probe;
// Orders and cancels go over the party's stream connection while it is open, REST otherwise.
let partyState: StreamState = 'stopped';
const orderPath: OrderPath = socketFirstOrderPath(client, () => partyStream, () => partyState === 'live' || partyState === 'backfilling');
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
    const cls = s.change === null ? '' : Number(s.change) >= 0 ? 'buy' : 'sell';
    return `<tr class="market${m.symbol === selected ? ' sel' : ''}" data-symbol="${escapeHtml(m.symbol)}" data-testid="market"><td>${escapeHtml(m.symbol)}</td><td>${trim(s.last)}</td><td class="${cls}">${pct(s.changePct)}</td><td class="dim">${Number(s.quoteVolume).toFixed(0)}</td></tr>`;
  });
  $('markets').innerHTML = `<tr><th>Market</th><th>Last</th><th>24h</th><th>Vol</th></tr>${rows.join('')}`;
}

function renderOrders(): void {
  renderOpenOrders($('orders'), orders.open());
  renderOrderHistory($('order-history'), orders.recent());
}

function renderPositions(): void {
  const marks = positionMarks();
  const rows = positions.open().map((p) => {
    const m = marks.get(p.positionId);
    const upnl = m ? `<td class="${m.unrealizedPnl.startsWith('-') ? 'sell' : 'buy'}" data-testid="position-upnl">${trim(m.unrealizedPnl)}</td>` : '<td>–</td>';
    return `<tr data-testid="position" data-position-id="${escapeHtml(p.positionId)}"><td title="${escapeHtml(p.positionId)}">${escapeHtml(p.positionId.slice(0, 10))}</td><td>${escapeHtml(p.market)}</td><td class="${Number(p.size) >= 0 ? 'buy' : 'sell'}" data-testid="position-size">${trim(p.size)}</td><td>${trim(p.entryPrice)}</td><td>${trim(m?.markPrice)}</td>${upnl}<td>${trim(p.realizedPnl)}</td></tr>`;
  });
  $('positions').innerHTML = `<tr><th>Position</th><th>Market</th><th>Size</th><th>Entry</th><th>Mark</th><th>uPnL</th><th>Realised</th></tr>${rows.join('')}`;
}

function renderBalance(balance: string): void {
  $('balance').textContent = trim(balance);
}

// ---- data ----
async function refreshMarkets(fresh = false): Promise<void> {
  markets = (await client.listMarkets({ fresh })).items;
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
  onAccount(await client.getAccount(party));
}

function onAccount(account: Account): void {
  renderAccount(account);
  renderPositions();
  updateTicket();
  renderTriggers(triggers);
}

let triggers: Trigger[] = [];
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
    const [t, closed] = await Promise.all([client.listUserTriggers(party, { limit: 50 }), client.listUserPositions(party, { status: 'closed', limit: 20 })]);
    triggers = t.items;
    renderTriggers(triggers);
    renderClosedEpochs(closed.items);
  } catch (err) {
    showError(err);
  }
}

function updateTicket(): void {
  const side = $<HTMLSelectElement>('order-side').value as 'buy' | 'sell';
  const type = $<HTMLSelectElement>('order-type').value as 'limit' | 'market';
  renderTicket(market(), { side, size: input('order-size'), price: type === 'limit' ? input('order-price') : bestPrice(side) });
}

async function refreshPartyState(): Promise<void> {
  positions = new PositionsStore(party);
  const pos = await client.listUserPositions(party, { status: 'open', limit: 100 });
  positions.loadSnapshot(pos.items);
  renderPositions();
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
    if (fills.apply(frame)) renderFills($('fills'), fills.list());
  } else if (frame.kind === 'position.update') {
    positions.applyFrame(frame);
    renderPositions();
    if (/^-?0\.0+$/.test(frame.payload.size)) refreshHistorySoon(); // an epoch closed
  } else if (frame.kind === 'balance.update' || frame.kind === 'inbound.deposit') {
    // The collateral comes with account.update (the last fill's balance alone misses deposits and withdrawals).
  } else if (frame.kind.startsWith('engine.trigger_')) {
    refreshHistorySoon();
  }
}

/** Another market: book, tape, chart and stream again; another interval (`sameMarket`): the chart and the market stream only. */
function selectMarket(sameMarket = false): void {
  marketStream?.stop();
  if (!sameMarket) bookPanel.show(selected);
  tape.reset(selected);
  renderMarkets();
  const m = market();
  if (m) $('rules').textContent = describeRules(m);
  void Promise.all([loadChart(), loadTape()]).catch(showError);
  marketStream = new StreamClient({
    client,
    kinds: ['trade', 'candle.update', 'candle.close'],
    markets: [selected],
    intervals: [interval],
    onMessage: onMarketMessage,
    onState: renderStatus,
    onRefused: showError,
    onError: (err) => console.warn('market stream', err),
    onReset: () => {
      tape.reset(selected);
      void Promise.all([loadChart(), loadTape()]).catch(showError);
    },
  });
  marketStream.start();
}

function startPartyStream(): void {
  partyStream = new StreamClient({
    client,
    party: [party],
    // My orders and my fills come from the user channels (each with its state on subscribe).
    kinds: ['account.update', 'position.update', 'balance.update', 'inbound.deposit', 'order.update', 'fill', 'engine.trigger_set', 'engine.trigger_fired', 'engine.trigger_cancelled'],
    onMessage: onPartyMessage,
    onState: (state) => {
      partyState = state;
      renderStatus(state, 'party-status');
    },
    onRefused: showError,
    onError: (err) => console.warn('party stream', err),
    onReset: () => {
      orders.clear();
      fills.clear();
      renderOrders();
      renderFills($('fills'), fills.list());
      void refreshPartyState().catch(showError);
    },
  });
  partyStream.start();
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
    const side = $<HTMLSelectElement>('order-side').value as 'buy' | 'sell';
    const type = $<HTMLSelectElement>('order-type').value as 'limit' | 'market';
    const size = input('order-size');
    const price = input('order-price');
    const problem = checkOrder(m, { type, size, price, reference: bestPrice(side) });
    if (problem) {
      out.className = 'msg err';
      out.textContent = problem;
      return;
    }
    const tp = input('order-tp');
    const sl = input('order-sl');
    out.className = 'msg';
    out.textContent = 'sending…';
    try {
      const legs = { ...(tp ? { tp: { triggerPrice: tp } } : {}), ...(sl ? { sl: { triggerPrice: sl } } : {}) };
      const order: OrderRequest = type === 'limit' ? { market: m.symbol, side, type, size, price, ...legs } : { market: m.symbol, side, type, size, ...legs };
      const { answer, path } = await orderPath.place(order, { allowImmediateTrigger: $<HTMLInputElement>('order-force').checked });
      showPath(path);
      if (answer.ok) {
        out.className = 'msg ok';
        out.textContent = `${answer.status}: ${answer.orderId}${answer.avgPrice ? ` @ ${trim(answer.avgPrice)}` : ''}`;
      } else {
        out.className = 'msg err';
        out.textContent = `rejected: ${answer.code} — ${answer.error}`;
      }
    } catch (err) {
      out.className = 'msg err';
      out.textContent = err instanceof GatewayError ? `${err.status} ${err.code ?? ''}: ${err.body.error}` : String(err);
    }
  })();
});

$('orders').addEventListener('click', (ev) => {
  const id = (ev.target as HTMLElement).dataset.cancel;
  if (!id) return;
  void (async () => {
    const out = $('order-result');
    try {
      const { answer, path } = await orderPath.cancel(id);
      showPath(path);
      out.className = answer.ok ? 'msg ok' : 'msg err';
      out.textContent = answer.ok ? `cancelled ${answer.orderId}` : `cancel rejected: ${answer.code} — ${answer.error}`;
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
      out.textContent = answer.ok ? `armed: ${answer.triggers.map((t) => `${t.kind} ${t.status}`).join(', ')}` : `rejected: ${answer.code} — ${answer.error}`;
    } catch (err) {
      out.className = 'msg err';
      out.textContent = err instanceof GatewayError ? `${err.status} ${err.code ?? ''}: ${err.body.error}` : String(err);
    }
  })();
});

for (const id of ['order-side', 'order-type', 'order-size', 'order-price']) $(id).addEventListener('input', updateTicket);

$('faucet').addEventListener('click', () => {
  void client.faucet(party).then(
    (answer) => ('newBalance' in answer ? renderBalance(answer.newBalance) : showError(new Error(`faucet: ${answer.code}`))),
    (err: unknown) => showError(err),
  );
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

// ---- start ----
try {
  // The clock sync (a device clock that is off still signs valid calls) runs while the public
  // market loads: only the party's signed calls need it.
  const synced = client.syncTime().catch(() => 0);
  await refreshMarkets();
  selectMarket();
  await synced;
  let store;
  try {
    store = indexedDbStore('gateway-console');
  } catch {
    store = memoryStore();
  }
  const kept = await keepPartySession(client, store, params.get('hint') ?? 'console');
  party = kept.signer.party;
  $('party').textContent = shortParty(party);
  $('party').title = party;
  await refreshPartyState();
  // A party made in this browser starts with nothing: fund it once from the faucet.
  if (Number($('balance').textContent) === 0) {
    const grant = await client.faucet(party).catch((err: unknown) => (showError(err), null));
    if (grant && 'newBalance' in grant) renderBalance(grant.newBalance);
  }
  renderOrders();
  renderFills($('fills'), fills.list());
  startPartyStream();
  // The party's fills and history, checked against the chain in this browser (docs/verification.md).
  void new VerificationPanel(client, party, $('verify-panel')).run();
  // Its collateral and positions, recomputed from the committed events beside what the screen shows (on demand).
  new AccountVerificationPanel(client, party, $('account-verify-panel'));
  setInterval(() => void refreshMarkets(true).catch(showError), 15_000);
  metrics.ready = true;
} catch (err) {
  showError(err);
}
