// Candle chart: TradingView's lightweight-charts. History from `GET /v1/candles`, then live bars
// from `candle.update` / `candle.close` frames, which use the same bucketing (a bar is keyed by
// its open time, so a live frame replaces or extends the last bar without a seam). Volume is a
// histogram in the bottom fifth. The series take numbers (a drawing); figures people read are exact.
import { CandlestickSeries, ColorType, createChart, HistogramSeries, type IChartApi, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts';
import type { Candle, CandlePayload } from '@gateway/client';

export class CandleChart {
  private readonly chart: IChartApi;
  private readonly series: ISeriesApi<'Candlestick'>;
  private readonly volume: ISeriesApi<'Histogram'>;
  private lastTime = 0;
  bars = 0;

  constructor(element: HTMLElement) {
    this.chart = createChart(element, {
      autoSize: true,
      layout: { background: { type: ColorType.Solid, color: '#161c23' }, textColor: '#7b8794' },
      grid: { vertLines: { color: '#1e2833' }, horzLines: { color: '#1e2833' } },
      timeScale: { timeVisible: true, secondsVisible: false },
    });
    this.series = this.chart.addSeries(CandlestickSeries, { upColor: '#26a69a', downColor: '#ef5350', wickUpColor: '#26a69a', wickDownColor: '#ef5350', borderVisible: false });
    this.series.priceScale().applyOptions({ scaleMargins: { top: 0.08, bottom: 0.24 } });
    this.volume = this.chart.addSeries(HistogramSeries, { priceFormat: { type: 'volume' }, priceScaleId: 'volume', lastValueVisible: false, priceLineVisible: false });
    this.volume.priceScale().applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
  }

  private static volumeBar(c: Pick<Candle, 'openTs' | 'open' | 'close' | 'volume'>) {
    const up = !c.close.startsWith('-') && Number(c.close) >= Number(c.open);
    return { time: Math.floor(Date.parse(c.openTs) / 1000) as UTCTimestamp, value: Number(c.volume), color: up ? 'rgba(38,166,154,.45)' : 'rgba(239,83,80,.45)' };
  }

  private static bar(c: Pick<Candle, 'openTs' | 'open' | 'high' | 'low' | 'close'>) {
    return { time: Math.floor(Date.parse(c.openTs) / 1000) as UTCTimestamp, open: Number(c.open), high: Number(c.high), low: Number(c.low), close: Number(c.close) };
  }

  setHistory(candles: Candle[]): void {
    const bars = candles.map(CandleChart.bar);
    this.series.setData(bars);
    this.volume.setData(candles.map(CandleChart.volumeBar));
    this.lastTime = bars.at(-1)?.time ?? 0;
    this.bars = bars.length;
    this.chart.timeScale().fitContent();
  }

  /** A live candle frame; older than the last bar (a late frame) is ignored. */
  apply(payload: CandlePayload): void {
    const bar = CandleChart.bar(payload);
    if (bar.time < this.lastTime) return;
    if (bar.time > this.lastTime) this.bars++;
    this.lastTime = bar.time;
    this.series.update(bar);
    this.volume.update(CandleChart.volumeBar(payload));
  }
}
