/**
 * `npm run bench:console`: how fast the reference web console shows a market, in Debian's
 * Chromium against the whole stack in this process (reference engine, indexer, PostgreSQL,
 * gateway; a seeded book and bar, see test/support/trading-stack.ts).
 *
 * For each page load (the first in a fresh profile: party made, session signed, faucet; then
 * reloads that restore the party and session from IndexedDB) the page reports, in ms since
 * navigation start:
 *   - first frame:  the first stream frame received (the book snapshot on subscribe);
 *   - first book:   book levels painted (the animation frame after the DOM update);
 *   - first chart:  chart bars painted;
 *   - first render: both (the later of the two);
 *   - floor:        the page's own DOMContentLoaded (HTML and bundle loaded and run, nothing asked
 *                   of the gateway yet): what no data path can beat, measured in the same load.
 * It also counts the stream sockets each load opens (one: the page's one connection). The page is
 * 1280×720, the smallest screen the layout is made for.
 * Settings: BENCH_DATABASE_URL (server, default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_CONSOLE_LOADS (default 10), BENCH_CONSOLE_ONLY (`verify`: the verification part alone;
 * `screen`: this part alone).
 */
import { sized } from './short.js';
import { gzipSync } from 'node:zlib';
import postgres from 'postgres';
import { migrate } from '../schema/migrate.js';
import { bundleConsole } from '../sandbox/console/server.js';
import { haveChromium, launchBrowser, CHROMIUM } from '../test/support/chromium.js';
import { startTradingStack } from '../test/support/trading-stack.js';
import { consoleVerifyBench } from './console-verify.js';

const SERVER = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const LOADS = Number(process.env.BENCH_CONSOLE_LOADS ?? sized(10, 1));

interface Metrics {
  firstFrameMs: number;
  bookRenderMs: number;
  chartRenderMs: number;
  firstRenderMs: number;
  floorMs: number;
  sockets: number;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

async function main(): Promise<void> {
  if (!haveChromium) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium`);
  const bundle = await bundleConsole();
  const schema = `bench_console_${Date.now().toString(36)}`;
  const admin = postgres(SERVER, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE SCHEMA ${schema}`);
  const u = new URL(SERVER);
  u.searchParams.set('search_path', schema);
  const sql = postgres(u.toString(), { max: 2, onnotice: () => {} });
  await migrate(sql);
  const stack = await startTradingStack(u.toString());
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1280, height: 720 });
    let sockets = 0;
    page.on('websocket', () => sockets++);
    const runs: Metrics[] = [];
    for (let i = 0; i < LOADS + 1; i++) {
      sockets = 0;
      await page.goto(stack.console.url);
      await page.waitForFunction(() => (globalThis as unknown as { __console?: { firstRenderMs: number | null; ready: boolean } }).__console?.firstRenderMs != null && (globalThis as unknown as { __console: { ready: boolean } }).__console.ready, null, { timeout: 30_000 });
      const m = await page.evaluate(() => {
        const c = (globalThis as unknown as { __console: Omit<Metrics, 'floorMs' | 'sockets'> }).__console;
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        return { firstFrameMs: c.firstFrameMs, bookRenderMs: c.bookRenderMs, chartRenderMs: c.chartRenderMs, firstRenderMs: c.firstRenderMs, floorMs: nav.domContentLoadedEventEnd };
      });
      runs.push({ ...m, sockets });
    }
    const [first, ...reloads] = runs;
    const frame = reloads.map((r) => r.firstFrameMs);
    const render = reloads.map((r) => r.firstRenderMs);
    const pick = (key: keyof Metrics) => {
      const xs = reloads.map((r) => r[key]);
      return { p50: Math.round(quantile(xs, 0.5)), p90: Math.round(quantile(xs, 0.9)) };
    };
    const result = {
      chromium: await browser.context.browser()?.version(),
      bundleBytes: Buffer.byteLength(bundle),
      bundleGzipBytes: gzipSync(bundle).length,
      firstVisit: {
        floorMs: Math.round(first!.floorMs),
        firstFrameMs: Math.round(first!.firstFrameMs),
        firstBookMs: Math.round(first!.bookRenderMs),
        firstChartMs: Math.round(first!.chartRenderMs),
        firstRenderMs: Math.round(first!.firstRenderMs),
      },
      reloads: {
        n: reloads.length,
        floorMs: pick('floorMs'),
        firstFrameMs: { p50: Math.round(quantile(frame, 0.5)), p90: Math.round(quantile(frame, 0.9)) },
        firstBookMs: pick('bookRenderMs'),
        firstChartMs: pick('chartRenderMs'),
        firstRenderMs: { p50: Math.round(quantile(render, 0.5)), p90: Math.round(quantile(render, 0.9)) },
      },
      socketsPerLoad: [...new Set(runs.map((r) => r.sockets))],
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await browser.close();
    await stack.close();
    await sql.end();
    await admin.unsafe(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

if (process.env.BENCH_CONSOLE_ONLY !== 'verify') await main();
if (process.env.BENCH_CONSOLE_ONLY !== 'screen') await consoleVerifyBench();
