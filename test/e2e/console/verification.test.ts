/// <reference lib="dom" />
// The console's verification in Chromium, against the whole stack with the reference indexer told
// to record one wrong user root (INDEXER_CORRUPT_USER_BATCH): the console party's fills show
// "verified" with the chain transaction id, "pending" before a commit, and the fill whose batch the
// chain recorded wrong as a mismatch in red; "Verify my history" walks every batch with a progress
// bar and a summary naming the mismatch. A screenshot is kept in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { requireChromiumOrSkip } from '../../support/chromium.js';
import { openConsoleSession, type ConsoleSession } from '../../support/console-session.js';
import type { TradingStack } from '../../support/trading-stack.js';

const ARTIFACTS = resolve(process.cwd(), 'test-artifacts');
const run = requireChromiumOrSkip('the console verification test (test/e2e/console/verification.test.ts)');

interface Metrics {
  runs: number;
  running: boolean;
  last: { status: string; batches: number; verified: number; failed: number } | null;
}

describe.skipIf(!run)('console: fills verified against the chain', () => {
  let session: ConsoleSession | undefined;
  let stack: TradingStack;
  let page: Page;
  let pageErrors: string[] = [];

  beforeAll(async () => {
    // Commit 1 holds console::…, maker::…, taker::… (user batches 1, 2, 3 in party order); each later
    // commit holds console's batch then maker's. The 6th recorded is console's third: its fill is the mismatch.
    session = await openConsoleSession({ stack: { corruptUserBatch: 6 } });
    ({ stack, page, pageErrors } = session);
  }, 120_000);
  afterAll(() => session?.close());

  const runs = () => page.evaluate(() => (globalThis as unknown as { __verification: Metrics }).__verification.runs);
  const idle = () => page.evaluate(() => !(globalThis as unknown as { __verification: Metrics }).__verification.running);
  const buyMarket = async (size: string) => {
    await page.selectOption('#order-side', 'buy');
    await page.selectOption('#order-type', 'market');
    await page.fill('#order-size', size);
    expect(await page.isDisabled('#order-price')).toBe(true); // a market order has no price
    await page.click('#order-submit');
    await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^filled: /);
  };
  const commit = async () => {
    stack.engine.engine.commit();
    await stack.indexer.waitFor(stack.engine.engine.log.maxSeq, 10_000);
  };
  // The panel also verifies again by itself when a commitment of the party arrives on the stream:
  // a click waits for such a run to end, and the state is read once no run is going on.
  const verify = async () => {
    const before = await runs();
    await page.click('#verify-history');
    await expect.poll(async () => (await runs()) > before && (await idle()), { timeout: 20_000 }).toBe(true);
  };
  const states = () => page.$$eval('[data-testid=my-fill]', (rows) => rows.map((r) => r.getAttribute('data-state')));

  it('shows each fill verified, pending or in red, and the history summary', { timeout: 120_000 }, async () => {
    try {
      await page.goto(stack.console.url);
      await page.waitForFunction(() => (globalThis as unknown as { __console?: { ready: boolean } }).__console?.ready === true, null, { timeout: 30_000 });
      await expect.poll(runs, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
      expect(await page.textContent('#verify-summary')).toBe('no user batch on chain yet');

      await commit(); // console's session and deposit: user batch 1
      await buyMarket('0.002');
      await commit(); // console's batch 2 holds fill A
      await buyMarket('0.003');
      await commit(); // console's batch 3 holds fill B: recorded wrong on chain
      await buyMarket('0.004'); // fill C: not committed yet

      await verify();
      // Newest first: C pending, B mismatch, A verified.
      expect(await states()).toEqual(['pending', 'mismatch', 'verified']);
      const tx = await page.textContent('[data-testid=my-fill][data-state=verified] [data-testid=fill-tx]');
      expect(tx).toMatch(/^tx [0-9a-f]{10}…$/);
      const red = await page.$eval('[data-testid=my-fill][data-state=mismatch] .bad', (el) => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color);
      expect(red).toBe('rgb(239, 83, 80)');
      expect(await page.textContent('[data-testid=my-fill][data-state=mismatch]')).toContain('mismatch (userRoot)');
      expect(await page.textContent('#verify-summary')).toMatch(/^2 of 3 user batches verified \(\d+ events\), 1 MISMATCH in \d+ ms$/);
      expect(await page.getAttribute('#verify-summary', 'class')).toBe('bad');
      expect(await page.$eval('#verify-progress', (el) => [(el as unknown as { value: number }).value, (el as unknown as { max: number }).max])).toEqual([3, 3]);
      const last = await page.evaluate(() => (globalThis as unknown as { __verification: Metrics }).__verification.last);
      expect(last).toMatchObject({ status: 'failed', batches: 3, verified: 2, failed: 1 });
    } finally {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: resolve(ARTIFACTS, 'console-verification.png'), fullPage: true }).catch(() => {});
    }
    expect(pageErrors).toEqual([]);
  });
});
