// The reference web console: a trading screen built only on the published client
// (`@gateway/client`) and the public API. Plain DOM, no framework (docs/adr/0017-web-console-plain-dom.md).
//
// Start-up: clock sync (GET /v1/time), markets with 24 h stats, a party kept in IndexedDB with its
// session (made and funded by the faucet on the first visit), then two streams: the selected
// market's public frames (book, trades, candles) and the party's own (positions, balance, order
// events). Each stream's state on subscribe arrives as snapshot frames, so a quiet market still
// shows its book and current bar at once.
import {
  GatewayClient,
  GatewayError,
  indexedDbStore,
  keepPartySession,
  memoryStore,
  PositionsStore,
  StreamClient,
  type Frame,
  type Market,
  type Order,
  type StreamMessage,
  type StreamState,
  type OrderRequest,
  type CandleInterval,
  CANDLE_INTERVALS,
} from '@gateway/client';

function asInterval(value: string | null): CandleInterval {
  return (CANDLE_INTERVALS as readonly string[]).includes(value ?? '') ? (value as CandleInterval) : '1m';
}
import { CandleChart } from './chart.js';
import { escapeHtml, pct, shortParty, trim } from './format.js';
import { checkOrder, describeRules } from './rules.js';
import { VerificationPanel } from './verification.js';

/** Timings read by the benchmark and the browser test (ms since navigation start). */
interface ConsoleMetrics {
  firstFrameMs: number | null;
  bookRenderMs: number | null;
  chartRenderMs: number | null;
  firstRenderMs: number | null;
  ready: boolean;
}
const metrics: ConsoleMetrics = { firstFrameMs: null, bookRenderMs: null, chartRenderMs: null, firstRenderMs: null, ready: false };
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
let book: { bids: [string, string][]; asks: [string, string][] } = { bids: [], asks: [] };
let trades: { side: string; price: string; size: string; ts: string }[] = [];
let party = '';
let positions: PositionsStore;
let openOrders: Order[] = [];
let marketStream: StreamClient | null = null;
let partyStream: StreamClient | null = null;
const chart = new CandleChart($('chart'));
const market = () => markets.find((m) => m.symbol === selected);

// ---- rendering ----
function renderStatus(state: StreamState): void {
  const el = $('status');
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

function renderBook(): void {
  const level = (side: 'bid' | 'ask') => ([p, s]: [string, string]) => `<tr data-testid="book-${side}"><td class="${side === 'bid' ? 'buy' : 'sell'}">${trim(p)}</td><td>${trim(s)}</td></tr>`;
  const asks = book.asks.slice(0, 10).reverse().map(level('ask'));
  const bids = book.bids.slice(0, 10).map(level('bid'));
  $('book').innerHTML = `<tr><th>Price</th><th>Size</th></tr>${asks.join('')}<tr><td colspan="2" class="dim" style="text-align:center">—</td></tr>${bids.join('')}`;
  if (book.bids.length + book.asks.length > 0) painted('bookRenderMs');
}

function renderTrades(): void {
  $('trades').innerHTML = trades
    .slice(0, 30)
    .map((t) => `<tr data-testid="trade"><td class="${t.side === 'buy' ? 'buy' : 'sell'}">${trim(t.price)}</td><td>${trim(t.size)}</td><td class="dim">${t.ts.slice(11, 19)}</td></tr>`)
    .join('');
}

function renderOrders(): void {
  const rows = openOrders.map(
    (o) =>
      `<tr data-testid="open-order" data-order-id="${escapeHtml(o.orderId)}"><td>${escapeHtml(o.market)}</td><td class="${o.side === 'buy' ? 'buy' : 'sell'}">${o.side}</td><td>${trim(o.price)}</td><td>${trim(o.size)}</td><td>${trim(o.filledSize)}</td><td><button type="button" data-cancel="${escapeHtml(o.orderId)}">Cancel</button></td></tr>`,
  );
  $('orders').innerHTML = `<tr><th>Market</th><th>Side</th><th>Price</th><th>Size</th><th>Filled</th><th></th></tr>${rows.join('')}`;
}

function renderPositions(): void {
  const rows = positions.open().map(
    (p) =>
      `<tr data-testid="position" data-position-id="${escapeHtml(p.positionId)}"><td title="${escapeHtml(p.positionId)}">${escapeHtml(p.positionId.slice(0, 10))}</td><td>${escapeHtml(p.market)}</td><td class="${Number(p.size) >= 0 ? 'buy' : 'sell'}" data-testid="position-size">${trim(p.size)}</td><td>${trim(p.entryPrice)}</td><td>${trim(p.realizedPnl)}</td></tr>`,
  );
  $('positions').innerHTML = `<tr><th>Position</th><th>Market</th><th>Size</th><th>Entry</th><th>Realised</th></tr>${rows.join('')}`;
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

let ordersTimer: ReturnType<typeof setTimeout> | null = null;
function refreshOrdersSoon(): void {
  ordersTimer ??= setTimeout(() => {
    ordersTimer = null;
    void refreshOrders();
  }, 150);
}
async function refreshOrders(): Promise<void> {
  try {
    const [open, partial] = await Promise.all([
      client.listUserOrders(party, { status: 'open', limit: 100 }),
      client.listUserOrders(party, { status: 'partially_filled', limit: 100 }),
    ]);
    openOrders = [...open.items, ...partial.items].sort((a, b) => b.createdSeq - a.createdSeq);
    renderOrders();
  } catch (err) {
    showError(err);
  }
}

/**
 * The party's collateral. The gateway's balance (REST and `balance.update`) is `newBalance` of the
 * party's last fill, which leaves out deposits and withdrawals made since; the console adds those
 * from the party's deposit and withdrawal lists, then follows live fills and deposit events.
 */
async function loadBalance(): Promise<void> {
  const [bal, deposits, withdrawals] = await Promise.all([
    client.getBalance(party),
    client.listUserDeposits(party, { limit: 1000 }),
    client.listUserWithdrawals(party, { limit: 1000 }),
  ]);
  const after = bal.asOfSeq ?? -1;
  let total = Number(bal.balance);
  for (const d of deposits.items) if (d.seq > after) total += Number(d.amount);
  for (const w of withdrawals.items) if (w.status !== 'rejected' && w.seq > after) total -= Number(w.amount);
  renderBalance(total.toFixed(10));
}

async function refreshPartyState(): Promise<void> {
  positions = new PositionsStore(party);
  const pos = await client.listUserPositions(party, { status: 'open', limit: 100 });
  positions.loadSnapshot(pos.items);
  renderPositions();
  await Promise.all([loadBalance(), refreshOrders()]);
}

async function loadChart(): Promise<void> {
  const history = await client.listCandles({ market: selected, interval: interval as '1m', limit: 300 });
  chart.setHistory(history.items);
  $('chart-title').textContent = `${selected} ${interval}`;
  if (chart.bars > 0) painted('chartRenderMs');
}

async function loadTape(): Promise<void> {
  const fills = await client.listFills({ market: selected, limit: 100 });
  trades = fills.items.filter((f) => f.role === 'taker').map((f) => ({ side: f.side, price: f.price, size: f.size, ts: f.createdAt }));
  renderTrades();
}

function onMarketMessage(message: StreamMessage): void {
  if (message.source !== 'live') return;
  metrics.firstFrameMs ??= performance.now();
  const frame: Frame = message.frame;
  switch (frame.kind) {
    case 'orderbook.snapshot':
      // Levels of a delta subscription carry an order count too; the price and size are what this table shows.
      book = { bids: frame.payload.bids.map((l) => [l[0], l[1]]), asks: frame.payload.asks.map((l) => [l[0], l[1]]) };
      renderBook();
      break;
    case 'trade':
      if (frame.snapshot) break;
      trades.unshift({ side: frame.payload.side, price: frame.payload.price, size: frame.payload.size, ts: frame.ts });
      trades.length = Math.min(trades.length, 100);
      renderTrades();
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
  if (frame.kind === 'position.update') {
    positions.applyFrame(frame);
    renderPositions();
    refreshOrdersSoon(); // a fill changes the open orders too
  } else if (frame.kind === 'balance.update') {
    // A snapshot balance is the last fill's, blind to later deposits: loadBalance() has the full one.
    if (!frame.snapshot) renderBalance(frame.payload.balance);
  } else if (frame.kind === 'inbound.deposit' && typeof frame.payload.newBalance === 'string') {
    renderBalance(frame.payload.newBalance);
  } else if (frame.kind.startsWith('engine.order_') || frame.kind.startsWith('engine.trigger_')) {
    refreshOrdersSoon();
  }
}

function selectMarket(): void {
  marketStream?.stop();
  book = { bids: [], asks: [] };
  renderBook();
  renderMarkets();
  const m = market();
  if (m) $('rules').textContent = describeRules(m);
  void Promise.all([loadChart(), loadTape()]).catch(showError);
  marketStream = new StreamClient({
    client,
    kinds: ['orderbook.snapshot', 'trade', 'candle.update', 'candle.close'],
    markets: [selected],
    intervals: [interval],
    onMessage: onMarketMessage,
    onState: renderStatus,
    onRefused: showError,
    onError: (err) => console.warn('market stream', err),
    onReset: () => void Promise.all([loadChart(), loadTape()]).catch(showError),
  });
  marketStream.start();
}

function startPartyStream(): void {
  partyStream = new StreamClient({
    client,
    party: [party],
    kinds: ['position.update', 'balance.update', 'inbound.deposit', 'engine.order_placed', 'engine.order_cancelled', 'engine.order_rejected', 'engine.trigger_set', 'engine.trigger_fired', 'engine.trigger_cancelled'],
    onMessage: onPartyMessage,
    onRefused: showError,
    onError: (err) => console.warn('party stream', err),
    onReset: () => void refreshPartyState().catch(showError),
  });
  partyStream.start();
}

function bestPrice(side: 'buy' | 'sell'): string | null {
  return (side === 'buy' ? book.asks[0]?.[0] : book.bids[0]?.[0]) ?? market()?.stats24h.last ?? null;
}

// ---- actions ----
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
      const answer = await client.placeOrder(order);
      if (answer.ok) {
        out.className = 'msg ok';
        out.textContent = `${answer.status}: ${answer.orderId}${answer.avgPrice ? ` @ ${trim(answer.avgPrice)}` : ''}`;
      } else {
        out.className = 'msg err';
        out.textContent = `rejected: ${answer.code} — ${answer.error}`;
      }
      refreshOrdersSoon();
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
      const answer = await client.cancelOrder(id);
      out.className = answer.ok ? 'msg ok' : 'msg err';
      out.textContent = answer.ok ? `cancelled ${answer.orderId}` : `cancel rejected: ${answer.code} — ${answer.error}`;
    } catch (err) {
      showError(err);
    }
    await refreshOrders();
  })();
});

$('tpsl-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void (async () => {
    const out = $('tpsl-result');
    const tp = input('tpsl-tp');
    const sl = input('tpsl-sl');
    try {
      const answer = await client.setTpsl({ market: selected, ...(tp ? { tp: { triggerPrice: tp } } : {}), ...(sl ? { sl: { triggerPrice: sl } } : {}) });
      out.className = answer.ok ? 'msg ok' : 'msg err';
      out.textContent = answer.ok ? `armed: ${answer.triggers.map((t) => `${t.kind} ${t.status}`).join(', ')}` : `rejected: ${answer.code} — ${answer.error}`;
    } catch (err) {
      out.className = 'msg err';
      out.textContent = err instanceof GatewayError ? `${err.status} ${err.code ?? ''}: ${err.body.error}` : String(err);
    }
  })();
});

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
  selectMarket();
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
  startPartyStream();
  // The party's fills and history, checked against the chain in this browser (docs/verification.md).
  void new VerificationPanel(client, party, $('verify-panel')).run();
  setInterval(() => void refreshMarkets(true).catch(showError), 15_000);
  metrics.ready = true;
} catch (err) {
  showError(err);
}
