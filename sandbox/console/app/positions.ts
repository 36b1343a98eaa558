// The positions table, drawn from the account view alone (docs/account.md): market, size, entry,
// mark, uPnL, ROE, margin and a close button, every figure from the same account frame as the
// header's uPnL (one mark for both: the market's last match), so the two never disagree.
import { divDecimal, mulDecimal, type Account } from '@gateway/client';
import { escapeHtml, money, pct, px, sz } from './format.js';
import { CLOSE_SLIPPAGE_LABEL } from './close.js';

export function renderPositions(table: HTMLElement, account: Account | null): void {
  const rows = (account?.positions ?? []).map((p) => {
    // Return on the margin the engine holds for the position.
    const roe = divDecimal(mulDecimal(p.unrealizedPnl, '100'), p.initialMargin);
    const side = p.size.startsWith('-') ? 'sell' : 'buy';
    return (
      `<tr data-testid="position" data-position-id="${escapeHtml(p.positionId)}" data-market="${escapeHtml(p.market)}">` +
      `<td title="epoch ${escapeHtml(p.positionId)}">${escapeHtml(p.market)}</td>` +
      `<td class="${side}" data-testid="position-size">${sz(p.market, p.size)}</td>` +
      `<td>${px(p.market, p.entryPrice)}</td><td data-testid="position-mark">${px(p.market, p.markPrice)}</td>` +
      `<td class="${p.unrealizedPnl.startsWith('-') ? 'sell' : 'buy'}" data-testid="position-upnl">${money(p.unrealizedPnl)}</td>` +
      `<td class="${roe?.startsWith('-') ? 'sell' : 'buy'}" data-testid="position-roe">${pct(roe)}</td>` +
      `<td>${money(p.initialMargin)}</td><td>${money(p.realizedPnl)}</td>` +
      `<td><button type="button" data-close="${escapeHtml(p.market)}" data-size="${escapeHtml(p.size)}" data-mark="${escapeHtml(p.markPrice)}" title="a reduce-only market order for the whole position, no worse than ${CLOSE_SLIPPAGE_LABEL} from the mark">Close ≤ ${CLOSE_SLIPPAGE_LABEL}</button></td></tr>`
    );
  });
  table.innerHTML = `<tr><th>Market</th><th>Size</th><th>Entry</th><th>Mark</th><th>uPnL</th><th>ROE</th><th>Margin</th><th>Realized</th><th></th></tr>${rows.join('') || '<tr><td colspan="9" class="dim">no open position</td></tr>'}`;
}
