// The console's desk actions in Chromium (sandbox/console/app/desk-actions.ts) against the whole
// stack: a resting order's price edited (a cancel-replace: the old order gone, the new one resting
// at the new price, for the same size), then "Cancel all" empties the open orders.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { requireChromiumOrSkip } from '../../support/chromium.js';
import { openConsoleSession, type ConsoleSession, placeFromTicket } from '../../support/console-session.js';
import type { TradingStack } from '../../support/trading-stack.js';

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

    // Cancel all.
    await page.click('[data-testid=cancel-all]');
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toBe('cancelled 3 order(s)');
    await expect.poll(() => page.locator('[data-testid=open-order]').count(), { timeout: 10_000 }).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
