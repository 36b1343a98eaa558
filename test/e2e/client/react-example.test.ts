// The React layer as a user meets it: the Vite + React example (examples/react-vite) built with Vite
// and @vitejs/plugin-react, served as static files, loaded in Chromium against the whole stack. Its
// hooks (useOrderBook, useTrades, useCandles, useStreamState, useAccount, useOrders, useFills) fill
// the page from ONE socket, and the page logs no error. (The page runs under StrictMode, but this is
// a production build, where React does not mount effects twice: the remount of a book watch is
// covered by test/integration/stream/book-view-snapshot.test.ts.)
import { spawn } from 'node:child_process';
import { stripVTControlCharacters as stripAnsi } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'vite';
import type { Page } from 'playwright-core';
import { launchBrowser, requireChromiumOrSkip } from '../../support/chromium.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { startTradingStack, type TradingStack } from '../../support/trading-stack.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const EXAMPLE = join(ROOT, 'examples/react-vite');
const run = requireChromiumOrSkip('the React example test (test/e2e/client/react-example.test.ts)');
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

describe.skipIf(!run)('the Vite + React example in Chromium', () => {
  let db: TestDatabase;
  let stack: TradingStack;
  let out: string;
  let server: Server;
  let url: string;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'react-example-'));
    db = await createTestDatabase();
    stack = await startTradingStack(db.url);
    // A production build, as `vite build` makes it (vitest runs with NODE_ENV=test, which Vite and
    // the React plugin would take for a development build), for this stack's gateway by
    // VITE_GATEWAY_URL (the page's address names none).
    const env = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    process.env.VITE_GATEWAY_URL = stack.gateway.url;
    try {
      await build({ configFile: join(EXAMPLE, 'vite.config.ts'), build: { outDir: out, emptyOutDir: true }, logLevel: 'error' });
    } finally {
      process.env.NODE_ENV = env;
      delete process.env.VITE_GATEWAY_URL;
    }
    server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const file = join(out, path === '/' ? 'index.html' : path);
      if (!file.startsWith(out) || !existsSync(file)) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    browser = await launchBrowser();
    page = await browser.context.newPage();
    page.on('pageerror', (e) => (errors.push(String(e)), process.env.DEBUG_EXAMPLE && console.log('PAGEERR', String(e))));
    page.on('console', (m) => (m.type() === 'error' && errors.push(m.text()), process.env.DEBUG_EXAMPLE && console.log('PAGE', m.type(), m.text())));
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await db?.drop();
    await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('builds, loads, and fills book, tape, bars and account from one socket', { timeout: 90_000 }, async () => {
    const open = new Set<unknown>();
    let opened = 0;
    page.on('websocket', (ws) => {
      opened++;
      open.add(ws);
      ws.on('close', () => open.delete(ws));
      // DEBUG_EXAMPLE=1 also prints the socket's messages both ways (what the page asked, what came).
      if (process.env.DEBUG_EXAMPLE) {
        const brief = (dir: string, raw: string | Buffer) => {
          const m = JSON.parse(String(raw)) as { kind?: string; op?: string; id?: string; seq?: number; market?: string; kinds?: string[]; payload?: { bookSeq?: number; kinds?: unknown } };
          console.log('WS', dir, m.op ?? m.kind, m.id ?? '', m.market ?? '', m.seq ?? '', m.kinds ?? '', m.payload?.bookSeq ?? '', m.kind === 'stream.ack' ? JSON.stringify(m.payload?.kinds) : '');
        };
        console.log('WS open', ws.url());
        ws.on('framesent', (f) => brief('>>', f.payload));
        ws.on('framereceived', (f) => brief('<<', f.payload));
      }
    });
    await page.goto(url);
    await expect.poll(() => page.textContent('[data-testid=state]'), { timeout: 20_000 }).toBe('live');
    // The seed's book (two levels a side) and its one trade. The book is seeded order by order once
    // the indexer's mirror reaches the stream's position (up to BOOK_MIRROR_WAIT_MS, 10 s, before it
    // falls back to the engine's levels): a loaded machine needs more than 15 s here (CI, once).
    // The page's account watches often come after the socket opened, while the book is still being
    // seeded: their subscribe must not cost the book its seeded snapshot (issue 32, ADR 0191).
    await expect
      .poll(() => page.locator('[data-testid=book-bid]').count(), { timeout: 30_000 })
      .toBe(2)
      .catch(async (err: unknown) => {
        const probe = await page.evaluate(() => {
          const g = (window as unknown as { __gateway: { live: { filters: unknown; sockets: number; streamState: string } } }).__gateway;
          return { filters: g.live.filters, sockets: g.live.sockets, state: g.live.streamState, seq: document.querySelector('[data-testid=book-seq]')?.textContent };
        });
        throw new Error(`${String(err)}: ${JSON.stringify(probe)}`);
      });
    expect(await page.locator('[data-testid=book-ask]').count()).toBe(2);
    expect(await page.textContent('[data-testid=book-ask] >> nth=1')).toContain('60100');
    await expect.poll(() => page.locator('[data-testid=trade]').count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => page.textContent('[data-testid=bars]'), { timeout: 10_000 }).toMatch(/^1 bars \(1m\), last close 60000$/);
    // useOpenInterest: the seed's one match left 0.01 held long (the frame's snapshot on the same socket).
    await expect.poll(() => page.textContent('[data-testid=open-interest]'), { timeout: 10_000 }).toBe('open interest 0.01');
    // The party made in the page, funded by the faucet: its account through useAccount.
    await expect.poll(() => page.textContent('[data-testid=equity]'), { timeout: 15_000 }).toBe('100000.00');
    // A new trade reaches the tape live, through the same socket.
    const taker = await stack.maker.client.placeOrder({ market: 'BTC-PERP', side: 'buy', type: 'market', size: '0.01' });
    expect(taker.ok).toBe(true);
    await expect.poll(() => page.locator('[data-testid=trade]').count(), { timeout: 10_000 }).toBe(2);
    expect(open.size).toBe(1);
    expect(opened).toBe(1); // a production build mounts each effect once: one socket opened, ever
    expect(errors).toEqual([]);
  });

  it('npm run example:react starts Vite, which prints its URL and serves the page', { timeout: 60_000 }, async () => {
    const port = await new Promise<number>((ok) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => ok(p));
      });
    });
    const child = spawn('npm', ['run', 'example:react', '--', '--port', String(port), '--strictPort', '--host', '127.0.0.1'], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let printed = '';
      const local = await new Promise<string>((ok, fail) => {
        const timer = setTimeout(() => fail(new Error(`no URL printed in 40 s:\n${printed}`)), 40_000);
        const onData = (d: Buffer) => {
          printed += d.toString();
          const m = /Local:\s+(http:\/\/\S+)/.exec(stripAnsi(printed));
          if (m) {
            clearTimeout(timer);
            ok(m[1]!);
          }
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
      });
      expect(local).toBe(`http://127.0.0.1:${port}/`);
      const page = await fetch(local);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="root">');
    } finally {
      process.kill(-child.pid!, 'SIGTERM'); // npm and the Vite under it
    }
  });
});
