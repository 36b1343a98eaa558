// The desk's two actions in the console (docs/client.md "The desk"), kept in one module: "Cancel
// all" (the client signs the cancel of every open order the user channel shows and sends them as
// batches: cancelAll) and "Edit price" of a resting order (a cancel-replace: the new order is placed
// only once the engine confirmed the cancel, for what is left of the old one, with the old one's time
// in force, reduce-only and unarmed TP/SL: replaceOrder, edit-order.ts). Both go over the party's
// socket while it is open, REST otherwise. The edit form lives outside the orders table, which is
// redrawn on every order update.
import { cancelAll, GatewayError, itemFailure, replaceOrder, type GatewayClient, type OrderUpdate, type StreamClient, type UserOrdersStore } from '@gateway/client';
import { replacementOf } from './edit-order.js';

export interface DeskActionsOptions {
  client: GatewayClient;
  orders: UserOrdersStore;
  /** The orders table (its rows carry data-order-id). */
  table: HTMLElement;
  /** Where results are written. */
  out: HTMLElement;
  /** The party's stream when its socket is open, else null (REST). */
  openStream: () => StreamClient | null;
}

export function mountDeskActions(o: DeskActionsOptions): void {
  const section = o.table.parentElement!;
  const bar = document.createElement('div');
  bar.className = 'desk-actions';
  bar.innerHTML = `<button type="button" data-testid="cancel-all">Cancel all</button>
    <form data-testid="edit-price-form" hidden>Edit <span data-testid="edit-order"></span> price
      <input data-testid="edit-price" inputmode="decimal" size="10" required> <button type="submit" data-testid="edit-save">Replace</button>
      <button type="button" data-testid="edit-close">×</button></form>`;
  section.insertBefore(bar, o.table);
  const form = bar.querySelector('form')!;
  const price = bar.querySelector<HTMLInputElement>('[data-testid=edit-price]')!;
  let editing: OrderUpdate | null = null;
  const via = () => {
    const s = o.openStream();
    return s ? { sender: s.sender } : {};
  };
  const say = (ok: boolean, text: string) => {
    o.out.className = ok ? 'msg ok' : 'msg err';
    o.out.textContent = text;
  };
  const fail = (err: unknown) => say(false, err instanceof GatewayError ? `${err.status} ${err.code ?? ''}: ${err.body.error}` : String(err));

  bar.querySelector('[data-testid=cancel-all]')!.addEventListener('click', () => {
    void (async () => {
      try {
        const done = await cancelAll(o.client, { orders: o.orders.open(), ...via() });
        const failed = done.results.map(itemFailure).filter((f) => f !== null);
        say(failed.length === 0, failed.length === 0 ? `cancelled ${done.orderIds.length} order(s)` : `${done.orderIds.length - failed.length} cancelled, ${failed.length} not: ${failed[0]!.code}`);
      } catch (err) {
        fail(err);
      }
    })();
  });

  // An "Edit" button per open row, added after each redraw of the table.
  const addEditButtons = () => {
    for (const row of o.table.querySelectorAll<HTMLTableRowElement>('tr[data-order-id]')) {
      const cell = row.lastElementChild;
      if (!cell || cell.querySelector('[data-edit]')) continue;
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.edit = row.dataset.orderId ?? '';
      b.textContent = 'Edit';
      cell.append(' ', b);
    }
  };
  new MutationObserver(addEditButtons).observe(o.table, { childList: true, subtree: true });
  addEditButtons();

  o.table.addEventListener('click', (ev) => {
    const id = (ev.target as HTMLElement).dataset.edit;
    if (!id) return;
    editing = o.orders.open().find((x) => x.orderId === id) ?? null;
    if (!editing) return;
    bar.querySelector('[data-testid=edit-order]')!.textContent = `…${id.slice(-8)} (${editing.side} ${editing.market ?? ''})`;
    price.value = editing.price ?? '';
    form.hidden = false;
    price.focus();
  });
  bar.querySelector('[data-testid=edit-close]')!.addEventListener('click', () => (form.hidden = true));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const old = editing;
    if (!old?.orderId) return;
    const newPrice = price.value.trim();
    void (async () => {
      try {
        // The order as the engine holds it now (the user channel's frame lacks tif and reduce-only).
        const me = await o.client.getUserMe();
        if (!me.ok) return say(false, `could not read the order from the engine: ${me.code}`);
        const current = me.openOrders.find((x) => x.orderId === old.orderId);
        if (!current) return say(false, 'that order is no longer open (filled or cancelled)');
        const replacement = replacementOf(current, newPrice);
        if (!replacement) return say(false, 'nothing left of that order to replace');
        const r = await replaceOrder(o.client, current.orderId, replacement, via());
        if (r.replaced) {
          form.hidden = true;
          say(true, `replaced: now ${newPrice} ${replacement.tif ?? 'gtc'}${replacement.reduceOnly ? ' reduce-only' : ''} (${(r.place.body as { orderId: string }).orderId})`);
        } else {
          const why = itemFailure(r.cancel) ?? itemFailure(r.place);
          say(false, r.place.outcome === 'skipped' ? `not replaced: the cancel failed (${why?.code ?? 'refused'}; already filled?)` : `cancelled, but the new order failed: ${why?.code ?? 'refused'}`);
        }
      } catch (err) {
        fail(err);
      }
    })();
  });
}
