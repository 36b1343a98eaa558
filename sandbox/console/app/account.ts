// The account panels of the console (docs/account.md): the header's equity, free collateral,
// margin use, unrealized PnL and leverage (live from account.update frames); the order ticket's
// margin and leverage readout before an order is sent; the triggers (armed, fired, cancelled, with a
// warning next to an armed one that would fire on the current mark) and the closed position epochs.
import { formatDecimal, mulDecimal, roundDecimal, orderMargin, triggerWouldFire, type Account, type Market, type Position, type Trigger } from '@gateway/client';
import { escapeHtml, money, px } from './format.js';

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;

let current: Account | null = null;

export function currentAccount(): Account | null {
  return current;
}

/** A decimal rounded to exactly `places` decimals (exact, half away from zero). */
function roundTo(value: string, places: number): string {
  return roundDecimal(value, places);
}

/** A percentage of a ratio string ("0.25" → "25.0 %"), for display only. */
function percent(ratio: string | null): string {
  return ratio === null ? '—' : `${roundTo(mulDecimal(ratio, '100'), 2)} %`;
}

/**
 * A leverage ratio for display: "–" when there is none to show (no position: the view's zero; equity
 * at or below zero: null), small ones with four decimals so a first position is visible.
 */
export function times(ratio: string | null): string {
  if (ratio === null || /^-?0(\.0*)?$/.test(ratio)) return '–';
  const places = ratio.replace(/^-/, '').startsWith('0') ? 4 : 2;
  const shown = roundTo(ratio, places);
  return /^-?0\.0+$/.test(shown) ? '< 0.0001×' : `${shown}×`;
}

export function renderAccount(account: Account): void {
  // Frames and REST answers can cross: never go back to an older view.
  if (current && account.asOfSeq < current.asOfSeq) return;
  current = account;
  $('balance').textContent = money(account.collateral);
  $('acct-equity').textContent = money(account.equity);
  $('acct-free').textContent = money(account.freeCollateral);
  $('acct-margin').textContent = percent(account.marginUsage);
  const upnl = $('acct-upnl');
  upnl.textContent = money(account.unrealizedPnl);
  upnl.className = account.unrealizedPnl.startsWith('-') ? 'sell' : 'buy';
  $('acct-leverage').textContent = times(account.leverage);
  $('acct-upnl').dataset.asOfSeq = String(account.asOfSeq);
}

/** The order ticket's readout: the order's margin, whether it fits, and the leverage after it. */
export function renderTicket(m: Market | undefined, order: { side: 'buy' | 'sell'; size: string; price: string | null; reduceOnly?: boolean }): void {
  const out = $('order-margin');
  if (!m || !current || !order.price || !/^\d+(\.\d{1,10})?$/.test(order.size) || !/^\d+(\.\d{1,10})?$/.test(order.price)) {
    out.textContent = 'margin: enter a size and a price';
    out.className = 'dim';
    return;
  }
  const need = orderMargin(current, m.maxLeverage, { market: m.symbol, side: order.side, size: order.size, price: order.price, reduceOnly: order.reduceOnly ?? false });
  const lev = times(need.leverageAfter);
  out.textContent = `margin ${money(need.margin)} of ${money(need.freeCollateral)} free (max ${m.maxLeverage}×) · leverage after ${lev}${need.fits ? '' : ' · does not fit: the engine will refuse it (insufficient_margin)'}`;
  out.className = need.fits ? 'ok' : 'sell';
  out.dataset.fits = String(need.fits);
}

/** Triggers of the party: status, and a warning next to an armed one the current mark would fire. */
export function renderTriggers(triggers: Trigger[]): void {
  const marks = new Map((current?.positions ?? []).map((p) => [p.positionId, p]));
  const rows = triggers.map((t) => {
    const position = t.positionId ? marks.get(t.positionId) : undefined;
    const fires =
      t.status === 'armed' && position !== undefined && triggerWouldFire(t.kind, position.size.startsWith('-') ? 'short' : 'long', t.triggerPrice, position.markPrice);
    const warn = fires ? `<span class="warn" data-testid="trigger-warning" title="the last trade already crossed it: it fires on the next trade">⚠ fires on the next trade</span>` : '';
    return `<tr data-testid="trigger" data-status="${escapeHtml(t.status)}"><td>${escapeHtml(t.market)}</td><td>${t.kind}</td><td class="status-${escapeHtml(t.status)}">${escapeHtml(t.status)}</td><td>${px(t.market, t.triggerPrice)}</td><td>${t.firedSize ? formatDecimal(t.firedSize) : '–'}</td><td>${warn}</td></tr>`;
  });
  $('triggers').innerHTML = `<tr><th>Market</th><th>Kind</th><th>Status</th><th>Trigger</th><th>Fired</th><th></th></tr>${rows.join('')}`;
}

/** Closed position epochs (flips and closes), newest first. */
export function renderClosedEpochs(epochs: Position[]): void {
  const rows = epochs.map(
    (p) =>
      `<tr data-testid="closed-epoch"><td title="${escapeHtml(p.positionId)}">…${escapeHtml(p.positionId.slice(-8))}</td><td>${escapeHtml(p.market)}</td><td>${px(p.market, p.entryPrice)}</td><td class="${p.realizedPnl.startsWith('-') ? 'sell' : 'buy'}">${money(p.realizedPnl)}</td><td class="dim">${escapeHtml((p.closedAt ?? '').slice(11, 19))}</td></tr>`,
  );
  $('closed-epochs').innerHTML = `<tr><th>Epoch</th><th>Market</th><th>Entry</th><th>Realised</th><th>Closed</th></tr>${rows.join('')}`;
}
