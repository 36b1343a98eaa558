// What every browser test of the web console starts from: a fresh database, the whole trading stack
// (engine → indexer → PostgreSQL → gateway, console on its own origin) and one Chromium page whose
// errors are recorded. close() stops them in reverse order; a start that fails stops what it began.
import type { Page } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from './db.js';
import { launchBrowser } from './chromium.js';
import { startTradingStack, type TradingStack } from './trading-stack.js';

export interface ConsoleSession {
  stack: TradingStack;
  page: Page;
  /** Uncaught errors of the page, as text. */
  pageErrors: string[];
  close(): Promise<void>;
}

export interface ConsoleSessionOptions {
  stack?: Parameters<typeof startTradingStack>[1];
  viewport?: { width: number; height: number };
}

export async function openConsoleSession(options: ConsoleSessionOptions = {}): Promise<ConsoleSession> {
  let db: TestDatabase | undefined;
  let stack: TradingStack | undefined;
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
  const close = async (): Promise<void> => {
    await browser?.close();
    await stack?.close();
    await db?.drop();
  };
  try {
    db = await createTestDatabase();
    stack = await startTradingStack(db.url, options.stack);
    browser = await launchBrowser();
    const page = await browser.context.newPage();
    if (options.viewport) await page.setViewportSize(options.viewport);
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    return { stack, page, pageErrors, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** Fills the console's order ticket and sends it (the page's own controls, as a trader does). */
export async function placeFromTicket(page: Page, fields: { side: 'buy' | 'sell'; type: 'limit' | 'market'; size: string; price?: string }): Promise<void> {
  await page.selectOption('#order-side', fields.side);
  await page.selectOption('#order-type', fields.type);
  await page.fill('#order-size', fields.size);
  // A market order has no price (the field is disabled).
  if (fields.type === 'limit') await page.fill('#order-price', fields.price ?? '');
  await page.click('#order-submit');
}
