// The console's account in Chromium against the whole stack: the header's collateral, equity, free
// collateral, margin use, unrealized PnL and leverage follow account.update frames; the order ticket
// shows the order's margin and whether it fits before it is sent; a TP that would fire at once is
// refused before signing and, sent anyway, is shown armed with a warning; closing the position shows
// its epoch closed and its triggers cancelled. A screenshot is kept in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { requireChromiumOrSkip } from '../../support/chromium.js';
import { openConsoleSession, type ConsoleSession } from '../../support/console-session.js';
import type { TradingStack } from '../../support/trading-stack.js';

const ARTIFACTS = resolve(process.cwd(), 'test-artifacts');
const run = requireChromiumOrSkip('the console account test (test/e2e/console/account.test.ts)');

describe.skipIf(!run)('web console account in Chromium', () => {
  let session: ConsoleSession | undefined;
  let stack: TradingStack;
  let page: Page;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    session = await openConsoleSession({ viewport: { width: 1400, height: 1000 } });
    ({ stack, page, pageErrors } = session);
  }, 120_000);
  afterAll(() => session?.close());

  const text = (selector: string) => page.textContent(selector);

  it('shows the account live, the order margin before sending, triggers and closed epochs', { timeout: 120_000 }, async () => {
    try {
      await scenario();
    } finally {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: resolve(ARTIFACTS, 'console-account.png'), fullPage: true }).catch(() => {});
    }
    expect(pageErrors).toEqual([]);
  });

  async function scenario(): Promise<void> {
    await page.goto(stack.console.url);
    await page.waitForFunction(() => (globalThis as unknown as { __console?: { ready: boolean } }).__console?.ready === true, null, { timeout: 30_000 });
    await expect.poll(() => text('#status'), { timeout: 15_000 }).toBe('live');
    // Funded by the faucet: everything is collateral, nothing in use.
    await expect.poll(() => text('[data-testid=equity]'), { timeout: 10_000 }).toBe('100000.00');
    expect(await text('#balance')).toBe('100000.00');
    expect(await text('[data-testid=free-collateral]')).toBe('100000.00');
    expect(await text('[data-testid=margin-use]')).toBe('0.00 %');
    expect(await text('[data-testid=leverage]')).toBe('–'); // no position: no leverage, not "0.0000×"
    // Just funded: the faucet shows its cooldown instead of answering a click with a 429.
    await expect.poll(() => text('#faucet'), { timeout: 10_000 }).toMatch(/^Faucet in (59|60) min$/);
    expect(await page.isDisabled('#faucet')).toBe(true);
    // Grouping from BTC's tick (1) and price (60 000): 1 to 100, and significant figures up to 1 000 (1.7 %).
    expect(await page.$$eval('#book-group option', (os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['none', 'tick:1', 'tick:10', 'tick:100', 'sig:4', 'sig:3', 'sig:2']);

    // The ticket: 0.5 BTC at 60 000 at 20× needs 1 500; 100 BTC does not fit.
    await page.selectOption('#order-side', 'buy');
    await page.selectOption('#order-type', 'limit');
    await page.fill('#order-price', '60000');
    await page.fill('#order-size', '0.5');
    expect(await text('[data-testid=order-margin]')).toContain('margin 1500.00 of 100000.00 free (max 20×)');
    expect(await page.getAttribute('[data-testid=order-margin]', 'data-fits')).toBe('true');
    await page.fill('#order-size', '100');
    expect(await page.getAttribute('[data-testid=order-margin]', 'data-fits')).toBe('false');
    expect(await text('[data-testid=order-margin]')).toContain('insufficient_margin');

    // A market buy fills at the maker's ask (60 100); then the maker trades with itself at 59 900:
    // the mark moves and the unrealized PnL follows, live.
    await page.selectOption('#order-type', 'market');
    expect(await page.isDisabled('#order-price')).toBe(true); // a market order has no price
    await page.fill('#order-size', '0.002');
    await page.click('#order-submit');
    await expect.poll(() => text('#order-result'), { timeout: 10_000 }).toMatch(/^filled: /);
    await expect.poll(() => page.locator('[data-testid=position-upnl]').count(), { timeout: 15_000 }).toBe(1);
    const placed = await stack.maker.client.placeOrder({ market: 'BTC-PERP', side: 'sell', type: 'limit', size: '0.01', price: '59900' });
    expect(placed.ok).toBe(true);
    await expect.poll(() => text('[data-testid=upnl]'), { timeout: 15_000 }).toBe('-0.40');
    expect(await text('[data-testid=position-upnl]')).toBe('-0.40');
    expect(await text('[data-testid=margin-use]')).not.toBe('0.00 %');
    expect(Number(await text('[data-testid=leverage]').then((t) => t!.replace('×', '')))).toBeGreaterThan(0);

    // A TP below the price of a long would fire at once: refused before signing…
    await page.fill('#tpsl-tp', '59000');
    await page.fill('#tpsl-sl', '');
    await page.click('#tpsl-submit');
    await expect.poll(() => text('#tpsl-result'), { timeout: 10_000 }).toMatch(/trigger_would_fire/);
    // …sent when meant: armed, with the warning next to it; a sane SL has none.
    await page.check('#tpsl-force');
    await page.click('#tpsl-submit');
    await expect.poll(() => text('#tpsl-result'), { timeout: 10_000 }).toMatch(/^armed: /);
    await page.uncheck('#tpsl-force');
    await page.fill('#tpsl-tp', '');
    await page.fill('#tpsl-sl', '50000');
    await page.click('#tpsl-submit');
    await expect.poll(() => page.locator('[data-testid=trigger][data-status=armed]').count(), { timeout: 10_000 }).toBe(2);
    await expect.poll(() => page.locator('[data-testid=trigger-warning]').count(), { timeout: 10_000 }).toBe(1);
    await page.screenshot({ path: resolve(ARTIFACTS, 'console-account-armed.png'), fullPage: true });

    // The position row: ROE on the margin held (uPnL −0.40 on a margin of 6.00), then its Close
    // button (a reduce-only market order for the whole size): the epoch shows closed, its triggers
    // cancelled, nothing in use.
    expect(await text('[data-testid=position-roe]')).toMatch(/^-\d+\.\d\d%$/);
    expect(await text('[data-testid=position] button[data-close]')).toBe('Close ≤ 1 %');
    await page.click('[data-testid=position] button[data-close]');
    await expect.poll(() => text('#order-result'), { timeout: 10_000 }).toMatch(/^closed 0\.002 at 59900 \(/);
    await expect.poll(() => page.locator('[data-testid=closed-epoch]').count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => page.locator('[data-testid=trigger][data-status=cancelled]').count(), { timeout: 10_000 }).toBe(2);
    await expect.poll(() => text('[data-testid=margin-use]'), { timeout: 10_000 }).toBe('0.00 %');

    // After a reload the filled orders (the market buy, the close) are still in Order history, and
    // the faucet still shows its cooldown.
    await page.reload();
    await page.waitForFunction(() => (globalThis as unknown as { __console?: { ready: boolean } }).__console?.ready === true, null, { timeout: 30_000 });
    await expect.poll(() => page.locator('[data-testid=ended-order]:has([data-testid=order-status]:text-is("filled"))').count(), { timeout: 10_000 }).toBe(2);
    await expect.poll(() => text('#faucet'), { timeout: 10_000 }).toMatch(/^Faucet in (59|60) min$/);
    await page.screenshot({ path: resolve(ARTIFACTS, 'console-account-reloaded.png'), fullPage: true });
  }
});
