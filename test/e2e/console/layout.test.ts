// The console as a screen a front-end team would fork (issue 32), in Chromium at 1280×720 and
// 1920×1080: without scrolling, the chart, the book, the tape, the ticket with its button and the
// positions are all in view; the header never wraps; no console error and no 404 (the favicon); the
// book has depth bars and cumulative sizes and a click on a level fills the ticket's price; a market
// order has no price; the URL follows the market; and the page holds ONE stream socket while the
// market, the interval, the grouping and the party change (the party-scoped panels then show the
// new party's account and orders, not the old one's). Screenshots go to test-artifacts/.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { requireChromiumOrSkip } from '../../support/chromium.js';
import { openConsoleSession, placeFromTicket, type ConsoleSession } from '../../support/console-session.js';
import type { TradingStack } from '../../support/trading-stack.js';

const ARTIFACTS = resolve(process.cwd(), 'test-artifacts');
const run = requireChromiumOrSkip('the console layout test (test/e2e/console/layout.test.ts)');

describe.skipIf(!run)('web console layout in Chromium', () => {
  let session: ConsoleSession | undefined;
  let stack: TradingStack;
  let page: Page;
  const consoleErrors: string[] = [];
  const notFound: string[] = [];
  let sockets = 0;

  beforeAll(async () => {
    session = await openConsoleSession({ viewport: { width: 1280, height: 720 } });
    ({ stack, page } = session);
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    page.on('response', (r) => r.status() === 404 && notFound.push(r.url()));
    page.on('websocket', () => sockets++);
    // An ETH trade, so the second market has a price and a bar too.
    const eth = await stack.maker.client.placeOrder({ market: 'ETH-PERP', side: 'sell', type: 'limit', size: '0.5', price: '3002.2' });
    expect(eth.ok).toBe(true);
    await stack.maker.client.placeOrder({ market: 'ETH-PERP', side: 'buy', type: 'limit', size: '0.5', price: '3000' });
  }, 120_000);
  afterAll(() => session?.close());

  /** Whether the element lies wholly inside the viewport (no scrolling needed to see it). */
  const inView = (selector: string) =>
    page.$eval(selector, (el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
    });
  const probe = () => page.evaluate(() => (globalThis as unknown as { __console: { ready: boolean; bookRenderMs: number | null; chartRenderMs: number | null } }).__console);

  async function checkScreen(size: string): Promise<void> {
    await expect.poll(async () => (await probe()).bookRenderMs !== null && (await probe()).chartRenderMs !== null, { timeout: 20_000 }).toBe(true);
    await expect.poll(() => page.locator('[data-testid=trade]').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: resolve(ARTIFACTS, `console-${size}.png`) });
    await page.locator('#book-panel').screenshot({ path: resolve(ARTIFACTS, `console-book-${size}.png`) });
    for (const selector of ['#chart', '#book', '#book-spread', '#tape-wrap', '[data-testid=trade]', '#order-submit', '#order-price', '#order-tif', '#order-reduce', '#positions-panel', '#markets-panel']) {
      expect(await inView(selector), `${selector} in view at ${size}`).toBe(true);
    }
    // One line of header: nothing overflows it.
    expect(await page.$eval('header', (h) => ({ overflow: h.scrollWidth > h.clientWidth, height: h.getBoundingClientRect().height }))).toEqual({ overflow: false, height: 36 });
  }

  it('1280×720 and 1920×1080: everything a trader watches in view, one header line, one socket, no error', { timeout: 120_000 }, async () => {
    await page.goto(stack.console.url);
    await page.waitForFunction(() => (globalThis as unknown as { __console?: { ready: boolean } }).__console?.ready === true, null, { timeout: 30_000 });
    await checkScreen('1280x720');

    // The book: depth bars and cumulative sizes (exact), the spread centred between asks and bids.
    const asks = await page.$$eval('#book tr[data-testid=book-ask]', (rows) => rows.map((r) => [r.querySelector('[data-col=size]')!.textContent, r.querySelector('[data-col=total]')!.textContent, (r as HTMLElement).style.background]));
    expect(asks.map((a) => a.slice(0, 2))).toEqual([
      ['0.5', '1'],
      ['0.5', '0.5'],
    ]);
    expect(asks[0]![2]).toContain('linear-gradient');
    expect(await page.textContent('#book-spread')).toMatch(/^spread 200 \(0\.333%\)/);

    // A click on the best bid: a limit order at that price.
    await page.click('#book tr[data-testid=book-bid] >> nth=0');
    expect(await page.inputValue('#order-price')).toBe('59900');
    expect(await page.inputValue('#order-type')).toBe('limit');
    // A market order has no price of its own.
    await page.selectOption('#order-type', 'market');
    expect(await page.isDisabled('#order-price')).toBe(true);
    await page.selectOption('#order-type', 'limit');
    expect(await page.isDisabled('#order-price')).toBe(false);

    // Another market, another interval, another grouping: the URL follows, the socket stays one.
    await page.click('tr[data-symbol="ETH-PERP"]');
    await expect.poll(() => page.url(), { timeout: 5_000 }).toContain('market=ETH-PERP');
    await expect.poll(() => page.textContent('#book-spread'), { timeout: 10_000 }).toMatch(/^spread 2\.2 /);
    await page.click('#interval-buttons button[data-interval="5m"]');
    await expect.poll(() => page.url()).toContain('interval=5m');
    await page.selectOption('#book-group', 'tick:1');
    await page.click('tr[data-symbol="BTC-PERP"]');
    await expect.poll(() => page.url()).toContain('market=BTC-PERP');
    await expect.poll(() => page.locator('#book tr[data-testid=book-bid]').count(), { timeout: 10_000 }).toBeGreaterThan(0);

    // Another party, made and funded in this browser: its watch replaces the old one's on the same socket.
    const balance = async () => Number(await page.textContent('#balance'));
    const partyFilter = () => page.evaluate(() => (globalThis as unknown as { __live: { filters: { party: string[] } | null } }).__live.filters?.party);
    await expect.poll(balance, { timeout: 10_000 }).toBe(100000);
    const first = await page.getAttribute('#party', 'title');
    // The first party trades (its collateral pays a fee) and keeps a bid resting.
    await placeFromTicket(page, { side: 'buy', type: 'market', size: '0.001' });
    await expect.poll(balance, { timeout: 10_000 }).toBeLessThan(100000);
    const firstBalance = await balance();
    await placeFromTicket(page, { side: 'buy', type: 'limit', size: '0.001', price: '50000' });
    await expect.poll(() => page.locator('[data-testid=open-order]').count(), { timeout: 10_000 }).toBe(1);
    await page.click('#new-party');
    await expect.poll(() => page.getAttribute('#party', 'title'), { timeout: 15_000 }).not.toBe(first);
    const second = await page.getAttribute('#party', 'title');
    await expect.poll(balance, { timeout: 15_000 }).toBe(100000);
    await expect.poll(partyFilter, { timeout: 10_000 }).toEqual([second]);
    expect(await page.locator('[data-testid=open-order]').count()).toBe(0);
    expect(await page.locator('#party option').count()).toBe(2);
    // And back: the first party's collateral and resting order, from its own channels again.
    await page.selectOption('#party', { index: 0 });
    await expect.poll(() => page.getAttribute('#party', 'title'), { timeout: 15_000 }).toBe(first);
    await expect.poll(balance, { timeout: 15_000 }).toBe(firstBalance);
    await expect.poll(partyFilter, { timeout: 10_000 }).toEqual([first]);
    await expect.poll(() => page.locator('[data-testid=open-order]').count(), { timeout: 10_000 }).toBe(1);
    await page.screenshot({ path: resolve(ARTIFACTS, 'console-party-switch-1280x720.png') });

    await page.setViewportSize({ width: 1920, height: 1080 });
    await checkScreen('1920x1080');

    expect(sockets).toBe(1);
    expect(consoleErrors).toEqual([]);
    expect(notFound).toEqual([]);
    expect(session!.pageErrors).toEqual([]);
  });
});
