// "My orders", "Order history" and "My fills" drawn from the client's stores of the user channels
// `order.update` and `fill` (docs/stream.md "User channels"): open orders with what is filled so far
// and a cancel button; an order leaves the open table on a terminal state and shows in the history
// with its reason (user, ioc, margin, reduce_only, rejected + the engine's code).
import type { OrderUpdate, UserFill } from '@gateway/client';
import { escapeHtml, money, px, sz } from './format.js';

const side = (s: string) => `<td class="${s === 'buy' ? 'buy' : s === 'sell' ? 'sell' : 'dim'}">${escapeHtml(s)}</td>`;
// Ids are opaque; their ends tell apart the orders of one engine run (the reference engine's start with a boot prefix).
const short = (id: string | null) => (id === null ? '–' : `<span title="${escapeHtml(id)}">…${escapeHtml(id.slice(-8))}</span>`);

export function renderOpenOrders(table: HTMLElement, orders: readonly OrderUpdate[]): void {
  const rows = orders.map(
    (o) =>
      `<tr data-testid="open-order" data-order-id="${escapeHtml(o.orderId ?? '')}"><td>${escapeHtml(o.market ?? '–')}</td>${side(o.side)}<td>${px(o.market, o.price)}</td><td>${sz(o.market, o.size)}</td><td data-testid="order-filled">${sz(o.market, o.filledSize)}</td><td>${px(o.market, o.avgPrice)}</td><td data-testid="order-status">${escapeHtml(o.status)}</td><td><button type="button" data-cancel="${escapeHtml(o.orderId ?? '')}">Cancel</button></td></tr>`,
  );
  table.innerHTML = `<tr><th>Market</th><th>Side</th><th>Price</th><th>Size</th><th>Filled</th><th>Avg</th><th>Status</th><th></th></tr>${rows.join('')}`;
}

/** The reason a terminal order ended, as a person reads it. */
export function describeReason(o: OrderUpdate): string {
  if (o.status === 'filled') return '';
  switch (o.reason) {
    case 'user':
      return 'cancelled by you';
    case 'ioc':
      return 'ioc: no more liquidity';
    case 'margin':
      return 'margin';
    case 'reduce_only':
      return 'reduce-only';
    case 'rejected':
      return `rejected${o.code ? `: ${o.code}` : ''}${o.error ? ` — ${o.error}` : ''}`;
    default:
      return o.reason ?? '';
  }
}

/** What this page sent, by clientOrderId: a rejection the engine answers without side or size is shown with them. */
export interface SentOrder {
  side: 'buy' | 'sell';
  size: string;
  price: string | null;
}

export function renderOrderHistory(table: HTMLElement, ended: readonly OrderUpdate[], sent: ReadonlyMap<string, SentOrder> = new Map()): void {
  const orders = ended.map((o) => {
    const mine = o.clientOrderId ? sent.get(o.clientOrderId) : undefined;
    return mine && (o.side === 'unknown' || o.size === null) ? { ...o, side: mine.side, size: mine.size, price: o.price ?? mine.price } : o;
  });
  const rows = orders.slice(0, 30).map(
    (o) =>
      `<tr data-testid="ended-order" data-order-id="${escapeHtml(o.orderId ?? '')}"><td>${short(o.orderId)}</td><td>${escapeHtml(o.market ?? '–')}</td>${side(o.side)}<td>${px(o.market, o.price)}</td><td>${sz(o.market, o.size)}</td><td data-testid="order-filled">${sz(o.market, o.filledSize)}</td><td>${px(o.market, o.avgPrice)}</td><td data-testid="order-status" class="status-${escapeHtml(o.status)}">${escapeHtml(o.status)}</td><td data-testid="order-reason" data-reason="${escapeHtml(o.reason ?? '')}">${escapeHtml(describeReason(o))}</td></tr>`,
  );
  table.innerHTML = `<tr><th>Order</th><th>Market</th><th>Side</th><th>Price</th><th>Size</th><th>Filled</th><th>Avg</th><th>Status</th><th>Reason</th></tr>${rows.join('')}`;
}

export function renderFills(table: HTMLElement, fills: readonly UserFill[]): void {
  const rows = fills.slice(0, 30).map(
    (f) =>
      `<tr data-testid="user-fill" data-order-id="${escapeHtml(f.orderId)}"><td class="dim">${escapeHtml(f.ts.slice(11, 19))}</td><td>${escapeHtml(f.market)}</td>${side(f.side)}<td>${px(f.market, f.price)}</td><td data-testid="fill-size">${sz(f.market, f.size)}</td><td>${money(f.fee)}</td><td>${escapeHtml(f.role)}</td><td>${short(f.orderId)}</td></tr>`,
  );
  table.innerHTML = `<tr><th>Time</th><th>Market</th><th>Side</th><th>Price</th><th>Size</th><th>Fee</th><th>Role</th><th>Order</th></tr>${rows.join('')}`;
}
