/// <reference lib="dom" />
// "Verify my history" does not stay on what the page saw at load. In Chromium, against the whole
// stack: the page opens before anything of the console party is committed ("no user batch on chain
// yet"); once a commitment of its events arrives on the stream (engine.user_batch_committed) the
// panel verifies again by itself, and "Verify my account" makes it verify again too, so the two
// panels never disagree about what the chain holds. Screenshots in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { requireChromiumOrSkip } from '../../support/chromium.js';
import { openConsoleSession, placeFromTicket, type ConsoleSession } from '../../support/console-session.js';

const ARTIFACTS = resolve(process.cwd(), 'test-artifacts');
const run = requireChromiumOrSkip('the console verification refresh test (test/e2e/console/verification-refresh.test.ts)');

interface Metrics {
  runs: number;
  running: boolean;
  last: { status: string; batches: number; verified: number } | null;
}
type Global = { __verification: Metrics; __accountVerification: Metrics };
const history = (page: Page) => page.evaluate(() => ({ ...(globalThis as unknown as Global).__verification }));
const account = (page: Page) => page.evaluate(() => ({ ...(globalThis as unknown as Global).__accountVerification }));
const shot = (page: Page, name: string) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  return page.screenshot({ path: resolve(ARTIFACTS, name), fullPage: true }).catch(() => {});
};

describe.skipIf(!run)('console: Verify my history follows new commitments', () => {
  let session: ConsoleSession | undefined;
  beforeAll(async () => {
    session = await openConsoleSession();
  }, 120_000);
  afterAll(() => session?.close());

  it('verifies again when a user batch of the party is committed, and after Verify my account', { timeout: 120_000 }, async () => {
    const { stack, page } = session!;
    const commit = async () => {
      stack.engine.engine.commit();
      await stack.indexer.waitFor(stack.engine.engine.log.maxSeq, 10_000);
    };
    try {
      await page.goto(stack.console.url);
      await page.waitForFunction(() => (globalThis as unknown as { __console?: { ready: boolean } }).__console?.ready === true, null, { timeout: 30_000 });
      await expect.poll(async () => (await history(page)).runs, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
      expect(await page.textContent('#verify-summary')).toBe('no user batch on chain yet');

      // The party's session, deposit and a fill committed: user batch 1, announced on the socket.
      await placeFromTicket(page, { side: 'buy', type: 'market', size: '0.002' });
      await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^filled: /);
      await commit();
      // Nobody clicks: the panel verified again on its own.
      await expect.poll(() => page.textContent('#verify-summary'), { timeout: 20_000 }).toMatch(/^1 of 1 user batches verified \(\d+ events\) in \d+ ms$/);
      await expect.poll(() => page.getAttribute('[data-testid=my-fill]', 'data-state'), { timeout: 10_000 }).toBe('verified');
      await shot(page, 'console-history-refreshed.png');

      // Another commitment, then "Verify my account": the history panel ends on batch 2 as well.
      await placeFromTicket(page, { side: 'buy', type: 'market', size: '0.003' });
      await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^filled: /);
      await commit();
      const before = (await history(page)).runs;
      const accountRuns = (await account(page)).runs;
      await page.click('#verify-account');
      await expect.poll(async () => (await account(page)).runs, { timeout: 30_000 }).toBe(accountRuns + 1);
      expect((await account(page)).last?.status).toBe('verified');
      await expect.poll(async () => { const h = await history(page); return h.runs > before && !h.running; }, { timeout: 30_000 }).toBe(true);
      expect((await history(page)).last).toMatchObject({ status: 'verified', batches: 2, verified: 2 });
      expect(await page.textContent('#verify-summary')).toMatch(/^2 of 2 user batches verified \(\d+ events\) in \d+ ms$/);
      expect(await page.$$eval('[data-testid=my-fill]', (rows) => rows.map((r) => r.getAttribute('data-state')))).toEqual(['verified', 'verified']);
    } finally {
      await shot(page, 'console-history-after-account.png');
    }
    expect(session!.pageErrors).toEqual([]);
  });
});
