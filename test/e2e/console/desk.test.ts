// The console's desk actions in Chromium (sandbox/console/app/desk-actions.ts) against the whole
// stack: a resting order's price edited (a cancel-replace: the old order gone, the new one resting
// at the new price, for the same size), then "Cancel all" empties the open orders; an edit keeps the
// order's time in force (post-only alo) and reduce-only, as the engine itself then reports the new
// orders. A screenshot is kept in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { requireChromiumOrSkip } from '../../support/chromium.js';
import { openConsoleSession, type ConsoleSession, placeFromTicket } from '../../support/console-session.js';
import type { TradingStack } from '../../support/trading-stack.js';

const ARTIFACTS = resolve(process.cwd(), 'test-artifacts');

/** The party's open orders as the engine itself holds them (its admin API, not the gateway). */
async function engineOrders(stack: TradingStack, party: string): Promise<Array<{ orderId: string; side: string; price: string | null; size: string; tif: string; reduceOnly: boolean }>> {
  const r = await fetch(`${stack.engine.url}/v1/admin/users/${encodeURIComponent(party)}/orders?market=all`, { headers: { authorization: `Bearer ${stack.engine.adminToken}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { orders: Array<{ orderId: string; side: string; price: string | null; size: string; tif: string; reduceOnly: boolean }> }).orders;
}

/** Opens the edit form of the open order at `price` and replaces it at `to`; the old order's id. */
async function editPrice(page: Page, price: string, to: string): Promise<string> {
  const row = page.locator('[data-testid=open-order]', { hasText: price }).first();
  const oldId = (await row.getAttribute('data-order-id'))!;
  await row.locator('button[data-edit]').click();
  await page.fill('[data-testid=edit-price]', to);
  await page.click('[data-testid=edit-save]');
  await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(new RegExp(`^replaced: now ${to} `));
  return oldId;
}

const run = requireChromiumOrSkip('the console desk test (test/e2e/console/desk.test.ts)');

describe.skipIf(!run)('console desk actions in Chromium', () => {
  let session: ConsoleSession | undefined;
  let stack: TradingStack;
  let page: Page;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    session = await openConsoleSession();
    ({ stack, page, pageErrors } = session);
  }, 120_000);
  afterAll(() => session?.close());

  it('edits a resting order\'s price, then cancels all', { timeout: 120_000 }, async () => {
    await page.goto(stack.console.url);
    await page.waitForFunction(() => (globalThis as unknown as { __console?: { ready: boolean } }).__console?.ready === true, null, { timeout: 30_000 });
    await expect.poll(async () => Number(await page.textContent('#balance')), { timeout: 10_000 }).toBe(100000);
    for (const price of ['50000', '50100', '50200']) {
      await placeFromTicket(page, { side: 'buy', type: 'limit', size: '0.001', price });
      await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^open: /);
    }
    await expect.poll(() => page.locator('[data-testid=open-order]').count(), { timeout: 10_000 }).toBe(3);

    // Edit the 50000 bid to 49000.
    const row = page.locator('[data-testid=open-order]', { hasText: '50000' }).first();
    const oldId = await row.getAttribute('data-order-id');
    await row.locator('button[data-edit]').click();
    await page.fill('[data-testid=edit-price]', '49000');
    await page.click('[data-testid=edit-save]');
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^replaced: now 49000/);
    await expect.poll(() => page.locator('[data-testid=open-order]', { hasText: '49000' }).count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator(`[data-testid=open-order][data-order-id="${oldId}"]`).count()).toBe(0);
    expect(await page.locator('[data-testid=open-order]').count()).toBe(3);
    expect(await page.locator('[data-testid=open-order]', { hasText: '49000' }).first().textContent()).toContain('0.001');
    const party = (await page.getAttribute('#party', 'title'))!;
    const plain = (await engineOrders(stack, party)).find((x) => x.price === '49000.0000000000');
    expect(plain).toMatchObject({ tif: 'gtc', reduceOnly: false, size: '0.0010000000' });

    // Cancel all.
    await page.click('[data-testid=cancel-all]');
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toBe('cancelled 3 order(s)');
    await expect.poll(() => page.locator('[data-testid=open-order]').count(), { timeout: 10_000 }).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('keeps an edited order\'s time in force and reduce-only, as the engine reports them', { timeout: 120_000 }, async () => {
    const party = (await page.getAttribute('#party', 'title'))!;
    // A post-only (alo) bid, then a long of 0.002 (a market buy at the maker's ask), then a
    // reduce-only GTC ask of 0.001 against that long.
    await page.selectOption('#order-tif', 'alo');
    await placeFromTicket(page, { side: 'buy', type: 'limit', size: '0.001', price: '50000' });
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^open: /);
    await page.selectOption('#order-tif', 'gtc');
    await placeFromTicket(page, { side: 'buy', type: 'market', size: '0.002' });
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^filled: /);
    await page.check('#order-reduce');
    await placeFromTicket(page, { side: 'sell', type: 'limit', size: '0.001', price: '70000' });
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^open: /);
    await page.uncheck('#order-reduce');
    await expect.poll(() => page.locator('[data-testid=open-order]').count(), { timeout: 10_000 }).toBe(2);
    const before = await engineOrders(stack, party);
    expect(before.map((x) => [x.side, x.price, x.tif, x.reduceOnly]).sort()).toEqual([
      ['buy', '50000.0000000000', 'alo', false],
      ['sell', '70000.0000000000', 'gtc', true],
    ]);

    const oldBid = await editPrice(page, '50000', '49000');
    expect(await page.textContent('#order-result')).toMatch(/^replaced: now 49000 alo \(/);
    const oldAsk = await editPrice(page, '70000', '71000');
    expect(await page.textContent('#order-result')).toMatch(/^replaced: now 71000 gtc reduce-only \(/);

    // The engine's own record of the new orders: same flags, new prices, the old ones gone.
    const after = await engineOrders(stack, party);
    expect(after.map((x) => x.orderId)).not.toContain(oldBid);
    expect(after.map((x) => x.orderId)).not.toContain(oldAsk);
    expect(after.map((x) => [x.side, x.price, x.size, x.tif, x.reduceOnly]).sort()).toEqual([
      ['buy', '49000.0000000000', '0.0010000000', 'alo', false],
      ['sell', '71000.0000000000', '0.0010000000', 'gtc', true],
    ]);
    await expect.poll(() => page.locator('[data-testid=open-order]', { hasText: '71000' }).count(), { timeout: 10_000 }).toBe(1);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: resolve(ARTIFACTS, 'console-desk-edit.png'), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
