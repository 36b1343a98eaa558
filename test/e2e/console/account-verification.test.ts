/// <reference lib="dom" />
// "Verify my account" in Chromium, against the whole stack: after trades are committed, the console
// party's collateral and position are recomputed from the chain's commitments and marked verified
// beside what the screen shows; a trade not committed yet makes the newer numbers pending while the
// verdict stays verified up to the last commitment, the tail said apart; and with the
// reference engine overcharging fees (ENGINE_CORRUPT=fee) the first discrepancy is said in words.
// Screenshots are kept in test-artifacts/.
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { requireChromiumOrSkip } from '../../support/chromium.js';
import { openConsoleSession, placeFromTicket, type ConsoleSession } from '../../support/console-session.js';
import type { TradingStack } from '../../support/trading-stack.js';

const ARTIFACTS = resolve(process.cwd(), 'test-artifacts');
const run = requireChromiumOrSkip('the console account verification test (test/e2e/console/account-verification.test.ts)');

interface Metrics {
  runs: number;
  running: boolean;
  last: { status: string; events: number; legs: number; first: string | null; ms: number; pendingAfterSeq: number | null; pendingCount: number } | null;
}

async function opened(session: ConsoleSession): Promise<Page> {
  const { stack, page } = session;
  await page.goto(stack.console.url);
  await page.waitForFunction(() => (globalThis as unknown as { __console?: { ready: boolean } }).__console?.ready === true, null, { timeout: 30_000 });
  return page;
}
const runs = (page: Page) => page.evaluate(() => (globalThis as unknown as { __accountVerification: Metrics }).__accountVerification.runs);
async function verifyAccount(page: Page): Promise<Metrics['last']> {
  const before = await runs(page);
  await page.click('#verify-account');
  await expect.poll(() => runs(page), { timeout: 30_000 }).toBe(before + 1);
  return page.evaluate(() => (globalThis as unknown as { __accountVerification: Metrics }).__accountVerification.last);
}
async function buy(page: Page, size: string): Promise<void> {
  await placeFromTicket(page, { side: 'buy', type: 'market', size });
  await expect.poll(() => page.textContent('#order-result'), { timeout: 10_000 }).toMatch(/^filled: /);
}
async function commit(stack: TradingStack): Promise<void> {
  stack.engine.engine.commit();
  await stack.indexer.waitFor(stack.engine.engine.log.maxSeq, 10_000);
}
const states = (page: Page) => page.$$eval('[data-testid=account-check]', (rows) => Object.fromEntries(rows.map((r) => [r.getAttribute('data-field'), r.querySelector('[data-state]')?.getAttribute('data-state')])));
const shot = (page: Page, name: string) => {
  mkdirSync(ARTIFACTS, { recursive: true });
  return page.screenshot({ path: resolve(ARTIFACTS, name), fullPage: true }).catch(() => {});
};

describe.skipIf(!run)('console: Verify my account', () => {
  describe('an honest engine', () => {
    let session: ConsoleSession | undefined;
    beforeAll(async () => {
      session = await openConsoleSession();
    }, 120_000);
    afterAll(() => session?.close());

    it('marks collateral and position verified once committed; a newer trade pending, the verdict verified up to the commitment', { timeout: 120_000 }, async () => {
      const page = await opened(session!);
      try {
        await buy(page, '0.002');
        await buy(page, '0.003');
        await commit(session!.stack);
        const last = await verifyAccount(page);
        expect(last).toMatchObject({ status: 'verified', first: null, legs: 2 });
        expect(await states(page)).toEqual({ collateral: 'verified', 'BTC-PERP size': 'verified', 'BTC-PERP entryPrice': 'verified', 'BTC-PERP realizedPnl': 'verified' });
        expect(await page.textContent('#account-verify-summary')).toMatch(/^Your account follows from the chain: \d+ committed events replayed \(2 fill legs\), 1 of 1 deposit credited, 0 of 0 withdrawals debited, in \d+ ms$/);
        // The recomputed collateral is what the account panel shows.
        const row = await page.$$eval('[data-field=collateral] td', (tds) => tds.map((t) => t.textContent));
        expect(row[1]).toBe(row[2]);
        expect(await page.isHidden('#account-verify-first')).toBe(true);
        // Its pages of proofs were fetched by the verification worker (ADR 0385): none is in the page's own timeline.
        expect(await page.evaluate(() => performance.getEntriesByType('resource').filter((e) => e.name.includes('/user-batches/proofs')).length)).toBe(0);
        await shot(page, 'console-account-verified.png');

        await buy(page, '0.004'); // not committed yet
        // Verified up to the last commitment; the newer trade is said apart (ADR 0182).
        const tail = await verifyAccount(page);
        expect(tail).toMatchObject({ status: 'verified', first: null, pendingAfterSeq: expect.any(Number) });
        expect(tail!.pendingCount).toBeGreaterThan(0);
        expect((await states(page)).collateral).toBe('pending');
        // The newer number is pending; the one at the last commitment is verified, and the row says so.
        const pendingRow = await page.$$eval('[data-field=collateral] td', (tds) => tds.map((t) => t.textContent ?? ''));
        expect(pendingRow[3]).toMatch(/^pending, verified at your last commitment \(seq \d+\): /);
        const summary = await page.textContent('#account-verify-summary');
        expect(summary).toMatch(new RegExp(`^Verified up to seq ${tail!.pendingAfterSeq}; ${tail!.pendingCount} changes? after it not committed yet \\(your newest balance change \\(seq \\d+\\) is not committed yet; your collateral at your last commitment \\(seq ${tail!.pendingAfterSeq}\\) is verified`));
        expect(await page.getAttribute('#account-verify-summary', 'class')).toBe('good');
      } finally {
        await shot(page, 'console-account-pending.png');
      }
      expect(session!.pageErrors).toEqual([]);
    });
  });

  describe('an engine that overcharges fees (ENGINE_CORRUPT=fee)', () => {
    let session: ConsoleSession | undefined;
    beforeAll(async () => {
      session = await openConsoleSession({ stack: { fault: 'fee' } });
    }, 120_000);
    afterAll(() => session?.close());

    it('marks the collateral different and says which trade was overcharged', { timeout: 120_000 }, async () => {
      const page = await opened(session!);
      try {
        await buy(page, '0.002');
        await commit(session!.stack);
        const last = await verifyAccount(page);
        expect(last?.status).toBe('failed');
        // The maker's best ask is 60 100: 0.002 × 60 100 = 120.2; 0.05 % is 0.0601, 0.06 % is 0.07212.
        expect(last?.first).toMatch(/^The fee charged on your buy of 0\.002 BTC-PERP at 60100 \(event #\d+\) is 0\.07212; the published fee \(0\.05 % of the notional for a taker, nothing for a maker\) is 0\.0601\.$/);
        expect(await page.textContent('#account-verify-first')).toBe(last?.first);
        expect(await page.isVisible('#account-verify-first')).toBe(true);
        // The screen shows the engine's collateral; the recomputation is 0.01202 higher.
        expect((await states(page)).collateral).toBe('different');
        const [, shown, recomputed] = await page.$$eval('[data-field=collateral] td', (tds) => tds.map((t) => t.textContent ?? ''));
        expect(Math.round((Number(recomputed) - Number(shown)) * 1e5)).toBe(1202);
        expect(await page.textContent('#account-verify-summary')).toMatch(/discrepanc(y|ies) found/);
      } finally {
        await shot(page, 'console-account-different.png');
      }
      expect(session!.pageErrors).toEqual([]);
    });
  });
});
