// The reference web console in a real browser (Debian's Chromium through playwright-core) against
// the whole stack (engine → indexer → PostgreSQL → gateway, console on its own origin): it loads,
// shows the book and the chart, makes and funds a party, places and cancels an order, shows an
// engine rejection, a fill moves the position, and TP/SL is armed on it. A screenshot is kept in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { requireChromiumOrSkip } from '../../support/chromium.js';
import { openConsoleSession, type ConsoleSession, placeFromTicket } from '../../support/console-session.js';
import type { TradingStack } from '../../support/trading-stack.js';

const ARTIFACTS = resolve(process.cwd(), 'test-artifacts');
const run = requireChromiumOrSkip('the console browser test (test/e2e/console/browser.test.ts)');

describe.skipIf(!run)('web console in Chromium', () => {
  let session: ConsoleSession | undefined;
  let stack: TradingStack;
  let page: Page;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    session = await openConsoleSession();
    ({ stack, page, pageErrors } = session);
  }, 120_000);
  afterAll(() => session?.close());

  const place = (fields: Parameters<typeof placeFromTicket>[1]) => placeFromTicket(page, fields);

  it('loads, trades and shows it', { timeout: 120_000 }, async () => {
    try {
      await scenario();
    } finally {
      // Kept either way: on a failure it shows what the page showed.
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: resolve(ARTIFACTS, 'console.png'), fullPage: true }).catch(() => {});
    }
    expect(pageErrors).toEqual([]);
  });

  async function scenario(): Promise<void> {
    await page.goto(stack.console.url);
    // Connected, a party made and funded, markets with 24 h stats, the book and the chart drawn.
    await page.waitForFunction(() => (globalThis as unknown as { __console?: { ready: boolean } }).__console?.ready === true, null, { timeout: 30_000 });
    await expect.poll(() => page.textContent('#status'), { timeout: 15_000 }).toBe('live');
    expect(await page.textContent('#party')).toMatch(/^console::[0-9a-f]{8}…$/);
    await expect.poll(async () => Number(await page.textContent('#balance')), { timeout: 10_000 }).toBe(100000);
    expect(await page.locator('[data-testid=market]').count()).toBeGreaterThanOrEqual(3);
    expect(await page.textContent('[data-testid=market][data-symbol="BTC-PERP"]')).toContain('60000');
    await expect.poll(() => page.locator('[data-testid=book-ask]').count(), { timeout: 15_000 }).toBe(2);
    expect(await page.locator('[data-testid=book-bid]').count()).toBe(2);
    expect(await page.locator('#chart canvas').count()).toBeGreaterThan(0);
    await page.waitForFunction(() => (globalThis as unknown as { __console: { firstRenderMs: number | null } }).__console.firstRenderMs !== null, null, { timeout: 15_000 });
    expect(await page.locator('[data-testid=trade]').count()).toBeGreaterThan(0);

    // A resting order appears in the open orders, and is cancelled from there.
    await place({ side: 'buy', type: 'limit', size: '0.001', price: '50000' });
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^open: /);
    await expect.poll(() => page.locator('[data-testid=open-order]').count(), { timeout: 10_000 }).toBe(1);
    await page.click('[data-testid=open-order] button[data-cancel]');
    await expect.poll(() => page.locator('[data-testid=open-order]').count(), { timeout: 10_000 }).toBe(0);
    expect(await page.textContent('#order-result')).toMatch(/^cancelled /);

    // The market's rules are checked before sending; an engine rejection is shown as it comes.
    await place({ side: 'buy', type: 'limit', size: '0.00001', price: '50000' });
    expect(await page.textContent('#order-result')).toMatch(/size has at most 4 decimals/);
    await place({ side: 'buy', type: 'limit', size: '100', price: '60200' });
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^rejected: /);

    // A market buy fills against the maker's ask: the position (keyed by positionId) moves.
    await place({ side: 'buy', type: 'market', size: '0.002' });
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^filled: /);
    await expect.poll(() => page.locator('[data-testid=position-size]').first().textContent(), { timeout: 15_000 }).toBe('0.002');
    expect(await page.getAttribute('[data-testid=position]', 'data-position-id')).toMatch(/.+/);
    await expect.poll(async () => Number(await page.textContent('#balance')), { timeout: 10_000 }).toBeLessThan(100000);

    // TP/SL on the new position.
    await page.fill('#tpsl-tp', '70000');
    await page.fill('#tpsl-sl', '50000');
    await page.click('#tpsl-submit');
    await expect.poll(() => page.textContent('#tpsl-result'), { timeout: 10_000 }).toMatch(/^armed: /);
  }
});
