// The console's market data in Chromium against the whole stack (issue 21): the book is kept from
// `orderbook.delta` frames (levels with order counts; another grouping is another view; a placed
// order shows in it), the trade tape is filled on load, and "my orders" / "my fills" follow the
// user channels `order.update` and `fill` (a partial fill shows the filled size, a cancel its
// reason), and orders go over the party's stream socket — over REST only while that socket is
// closed, which the test brings about by refusing the page's party sockets for a while.
// A screenshot is kept in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page, WebSocketRoute } from 'playwright-core';
import { requireChromiumOrSkip } from '../../support/chromium.js';
import { openConsoleSession, type ConsoleSession, placeFromTicket } from '../../support/console-session.js';
import { SEED_MARKET, type TradingStack } from '../../support/trading-stack.js';

const ARTIFACTS = resolve(process.cwd(), 'test-artifacts');
const run = requireChromiumOrSkip('the console market-data test (test/e2e/console/market-data.test.ts)');

interface Probe {
  ready: boolean;
  lastPath: string | null;
  book: { market: string; group: string; depth: number; bookSeq: number | null; resyncs: number } | null;
}

describe.skipIf(!run)('web console market data in Chromium', () => {
  let session: ConsoleSession | undefined;
  let stack: TradingStack;
  let page: Page;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    session = await openConsoleSession({ viewport: { width: 1400, height: 1100 } });
    ({ stack, page, pageErrors } = session);
  }, 120_000);
  afterAll(() => session?.close());

  const probe = () => page.evaluate(() => (globalThis as unknown as { __console: Probe }).__console);
  /** The book as drawn: [side, price, size, orders] per row, asks (highest first) then bids. */
  const bookRows = () =>
    page.$$eval('#book tr[data-testid^=book-]', (rows) =>
      rows.map((r) => [r.getAttribute('data-testid')!.slice(5), ...['[data-col=price]', '[data-col=size]', '[data-testid=book-count]'].map((c) => r.querySelector(c)?.textContent ?? '')]),
    );
  const place = (fields: Parameters<typeof placeFromTicket>[1]) => placeFromTicket(page, fields);

  it('keeps the book from deltas, fills the tape on load, and follows my orders and fills', { timeout: 120_000 }, async () => {
    try {
      await scenario();
    } finally {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: resolve(ARTIFACTS, 'console-market-data.png'), fullPage: true }).catch(() => {});
    }
    expect(pageErrors).toEqual([]);
  });

  async function scenario(): Promise<void> {
    // The page's one stream socket (book, market data and the party's channels: docs/client.md "One
    // connection") passes through Playwright's WebSocket routing: proxied to the gateway, or, while
    // `refuseParty` is set, closed before it opens.
    let refuseParty = false;
    const partySockets: WebSocketRoute[] = [];
    let opened = 0;
    page.on('websocket', () => opened++);
    await page.routeWebSocket(
      (url) => url.pathname === '/v1/stream',
      async (ws) => {
        if (refuseParty) return ws.close({ code: 1011, reason: 'refused by the test' });
        ws.connectToServer();
        partySockets.push(ws);
      },
    );
    await page.goto(stack.console.url);
    await page.waitForFunction(() => (globalThis as unknown as { __console?: Probe }).__console?.ready === true, null, { timeout: 30_000 });

    // The tape is filled on load: the seed's one trade (60000 × 0.01), before any new match.
    await expect.poll(() => page.locator('[data-testid=trade]').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.textContent('[data-testid=trade]')).toContain('60000');
    const seedTrade = Number(await page.getAttribute('[data-testid=trade]', 'data-seq'));
    expect(seedTrade).toBeGreaterThan(0);

    // The book from the delta subscription: the seed's levels, one order each, and the book seq held.
    await expect.poll(bookRows, { timeout: 15_000 }).toEqual([
      ['ask', '60200', '0.5', '1'],
      ['ask', '60100', '0.5', '1'],
      ['bid', '59900', '0.5', '1'],
      ['bid', '59800', '0.5', '1'],
    ]);
    // The spread, exact: 60100 − 59900.
    expect(await page.textContent('[data-testid=book-spread]')).toMatch(/^spread 200 /);
    const first = (await probe()).book!;
    expect(first).toMatchObject({ market: SEED_MARKET, group: 'none', depth: 10, resyncs: 0 });
    expect(first.bookSeq).toBeGreaterThan(seedTrade);
    expect(await page.textContent('#sel-oi')).toBe('0.01');

    // Another order at 60100 (the maker's, over REST): that level now holds two orders, at once.
    const more = await stack.maker.client.placeOrder({ market: SEED_MARKET, side: 'sell', type: 'limit', size: '0.25', price: '60100' });
    expect(more.ok).toBe(true);
    await expect.poll(bookRows, { timeout: 10_000 }).toContainEqual(['ask', '60100', '0.75', '2']);

    // My order from the console, over the socket: in the book (a new best bid) and in my orders from order.update.
    await expect.poll(() => page.textContent('#party-status'), { timeout: 10_000 }).toBe('live');
    await place({ side: 'buy', type: 'limit', size: '0.002', price: '60000' });
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^open: /);
    expect(await page.textContent('#order-path')).toBe('via socket');
    const orderId = (await page.textContent('#order-result'))!.replace(/^open: /, '').trim();
    await expect.poll(bookRows, { timeout: 10_000 }).toContainEqual(['bid', '60000', '0.002', '1']);
    const mine = page.locator(`[data-testid=open-order][data-order-id="${orderId}"]`);
    await expect.poll(() => mine.count(), { timeout: 10_000 }).toBe(1);
    expect(await mine.locator('[data-testid=order-status]').textContent()).toBe('open');

    // Grouping is another view: at 2 significant figures bids round down and asks round up, so the
    // asks are one level of three orders, and the bids below 60000 one level of two.
    await page.selectOption('#book-group', 'sig:2');
    await expect.poll(bookRows, { timeout: 10_000 }).toEqual([
      ['ask', '61000', '1.25', '3'],
      ['bid', '60000', '0.002', '1'],
      ['bid', '59000', '1', '2'],
    ]);
    expect((await probe()).book).toMatchObject({ group: 'sig:2', resyncs: 0 });
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.locator('#book-panel').screenshot({ path: resolve(ARTIFACTS, 'console-book-grouped.png') });
    await page.selectOption('#book-group', 'tick:100');
    await expect.poll(async () => (await bookRows()).length, { timeout: 10_000 }).toBe(5);
    await page.selectOption('#book-group', 'none');
    await page.selectOption('#book-depth', '5');
    await expect.poll(async () => (await bookRows()).length, { timeout: 10_000 }).toBe(5);
    expect((await probe()).book).toMatchObject({ group: 'none', depth: 5 });

    // Book, tape, chart, my orders and every view change so far: one socket.
    expect(opened).toBe(1);

    // A partial fill (the maker sells 0.001 into my bid): my order shows the filled size, my fills
    // the leg (maker, 60000), the tape the new trade; the bid shrinks.
    const hit = await stack.maker.client.placeOrder({ market: SEED_MARKET, side: 'sell', type: 'market', size: '0.001' });
    expect(hit.ok).toBe(true);
    await expect.poll(() => mine.locator('[data-testid=order-filled]').textContent(), { timeout: 10_000 }).toBe('0.001');
    expect(await mine.locator('[data-testid=order-status]').textContent()).toBe('partially_filled');
    const fill = page.locator(`[data-testid=user-fill][data-order-id="${orderId}"]`);
    await expect.poll(() => fill.count(), { timeout: 10_000 }).toBe(1);
    expect(await fill.locator('[data-testid=fill-size]').textContent()).toBe('0.001');
    expect(await fill.textContent()).toContain('maker');
    await expect.poll(() => page.locator('[data-testid=trade]').count(), { timeout: 10_000 }).toBe(2);
    await expect.poll(bookRows, { timeout: 10_000 }).toContainEqual(['bid', '60000', '0.001', '1']);
    // The header's open interest follows open_interest.update (the REST list is refreshed only every
    // 15 s): the seed's 0.01 long, plus my 0.001 long against the maker's now 0.011 short.
    await expect.poll(() => page.textContent('#sel-oi'), { timeout: 3_000 }).toBe('0.011');

    // Cancelled from the table (over the socket): it leaves my open orders and shows in the history with its reason.
    await mine.locator('button[data-cancel]').click();
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^cancelled /);
    expect(await page.textContent('#order-path')).toBe('via socket');
    await expect.poll(() => mine.count(), { timeout: 10_000 }).toBe(0);
    const ended = page.locator(`[data-testid=ended-order][data-order-id="${orderId}"]`);
    await expect.poll(() => ended.count(), { timeout: 10_000 }).toBe(1);
    expect(await ended.locator('[data-testid=order-status]').textContent()).toBe('cancelled');
    expect(await ended.locator('[data-testid=order-reason]').getAttribute('data-reason')).toBe('user');
    expect(await ended.locator('[data-testid=order-filled]').textContent()).toBe('0.001');
    await expect.poll(async () => (await bookRows()).some((r) => r[0] === 'bid' && r[1] === '60000'), { timeout: 10_000 }).toBe(false);

    // A market order that finds no liquidity beyond what it took ends at once: reason ioc.
    await place({ side: 'buy', type: 'market', size: '2' });
    await expect.poll(() => page.locator('[data-testid=ended-order] [data-reason=ioc]').count(), { timeout: 10_000 }).toBe(1);

    // Nothing was resubscribed: every delta continued the chain with a matching checksum.
    expect((await probe()).book!.resyncs).toBe(0);

    // The page's socket closed (dropped, then refused): the ticket falls back to REST, and the
    // order still reaches my orders once the socket is back (its snapshot on subscribe).
    refuseParty = true;
    for (const ws of partySockets.splice(0)) await ws.close({ code: 1011, reason: 'dropped by the test' });
    await expect.poll(() => page.textContent('#party-status'), { timeout: 10_000 }).not.toBe('live');
    await place({ side: 'sell', type: 'limit', size: '0.001', price: '65000' });
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^open: /);
    expect(await page.textContent('#order-path')).toBe('via REST');
    const viaRest = (await page.textContent('#order-result'))!.replace(/^open: /, '').trim();
    refuseParty = false;
    await expect.poll(() => page.textContent('#party-status'), { timeout: 20_000 }).toBe('live');
    await expect.poll(() => page.locator(`[data-testid=open-order][data-order-id="${viaRest}"]`).count(), { timeout: 10_000 }).toBe(1);
    // The book came back on the same new socket, with the order sent over REST.
    await expect.poll(bookRows, { timeout: 10_000 }).toContainEqual(['ask', '65000', '0.001', '1']);
  }
});
