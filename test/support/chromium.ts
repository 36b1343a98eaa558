// Debian's Chromium driven by playwright-core (no browser download: the system package is used).
// Outside CI a missing Chromium skips the browser tests loudly; in CI it is an error (.ci/run
// installs the package).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);

export function requireChromiumOrSkip(what: string): boolean {
  if (haveChromium) return true;
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);
  process.stderr.write(`\n*** SKIPPING ${what}: no Chromium at ${CHROMIUM} (apt-get install -y chromium) ***\n\n`);
  return false;
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-quic',
  '--disable-sync',
];

/** A browser with a fresh profile (user-data-dir), removed on close. */
export async function launchBrowser(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
