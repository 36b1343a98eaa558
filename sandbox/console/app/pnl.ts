// The trader's history below the screen: PnL over time (GET /v1/users/:party/pnl: total PnL as a
// baseline chart, equity, realized, fees) and the trade history with its cumulative realized PnL
// (GET /v1/users/:party/trade-history). Both are mirror reads: read again a moment after each fill.
import { BaselineSeries, ColorType, createChart, type IChartApi, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts';
import type { CandleInterval, GatewayClient, PnlHistory, TradeHistoryItem } from '@gateway/client';
import { escapeHtml, money, px, sz } from './format.js';

export class PnlPanel {
  private readonly chart: IChartApi;
  private readonly series: ISeriesApi<'Baseline'>;
  /** The last history drawn (tests and the benchmark read it through the page probe). */
  last: PnlHistory | null = null;

  constructor(
    private readonly client: GatewayClient,
    /** The party shown (the console's party switcher changes it). */
    public party: string,
    chartEl: HTMLElement,
    private readonly summary: HTMLElement,
    private readonly historyTable: HTMLElement,
    private readonly intervalSelect: HTMLSelectElement,
  ) {
    this.chart = createChart(chartEl, {
      autoSize: true,
      layout: { background: { type: ColorType.Solid, color: '#161c23' }, textColor: '#7b8794' },
      grid: { vertLines: { color: '#1e2833' }, horzLines: { color: '#1e2833' } },
      timeScale: { timeVisible: true, secondsVisible: false },
    });
    this.series = this.chart.addSeries(BaselineSeries, { baseValue: { type: 'price', price: 0 }, topLineColor: '#26a69a', bottomLineColor: '#ef5350' });
    intervalSelect.addEventListener('change', () => void this.refresh());
  }

  async refresh(): Promise<void> {
    const interval = this.intervalSelect.value as CandleInterval;
    const [history, trades] = await Promise.all([this.client.getUserPnl(this.party, { interval }), this.client.listUserTradeHistory(this.party, { limit: 30 })]);
    this.last = history;
    // The chart plots numbers (a drawing); every figure a person reads is the exact decimal.
    this.series.setData(history.points.map((p) => ({ time: Math.floor(Date.parse(p.ts) / 1000) as UTCTimestamp, value: Number(p.pnl) })));
    this.chart.timeScale().fitContent();
    const last = history.points.at(-1);
    this.summary.innerHTML = last
      ? `PnL <b class="${last.pnl.startsWith('-') ? 'sell' : 'buy'}">${money(last.pnl, true)}</b> · equity ${money(last.equity)} · realized ${money(last.cumulativeRealizedPnl)} · fees ${money(last.cumulativeFees)} · unrealized ${money(last.unrealizedPnl)}`
      : 'no history yet';
    this.renderTrades(trades.items);
  }

  private renderTrades(items: readonly TradeHistoryItem[]): void {
    const rows = items.map(
      (t) =>
        `<tr data-testid="trade-history" data-seq="${t.seq}"><td class="dim">${escapeHtml(t.createdAt.slice(5, 19).replace('T', ' '))}</td><td>${escapeHtml(t.market)}</td><td class="${t.side}">${escapeHtml(t.side)}</td><td>${escapeHtml(t.role)}</td><td>${px(t.market, t.price)}</td><td>${sz(t.market, t.size)}</td><td>${money(t.fee)}</td><td class="${t.realizedPnl.startsWith('-') ? 'sell' : ''}">${money(t.realizedPnl)}</td><td data-testid="cumulative-pnl">${money(t.cumulativeRealizedPnl)}</td></tr>`,
    );
    this.historyTable.innerHTML = `<tr><th>Time</th><th>Market</th><th>Side</th><th>Role</th><th>Price</th><th>Size</th><th>Fee</th><th>Realized</th><th>Cumulative realized</th></tr>${rows.join('')}`;
  }
}
