// The client's verification in Chromium, as a page runs it: GatewayClient.verifyHistory over HTTP
// (a page of proofs fetched, its leaves hashed from its bytes, ADR 0370) hashes with WebAssembly on
// an ordinary page, and with plain JavaScript on a page whose Content-Security-Policy refuses
// WebAssembly (no 'wasm-unsafe-eval'), with the same verdicts; a tampered event fails in both. A
// page that chose plain JavaScript (useSha256('js')) compiles nothing: no CSP violation at all.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, requireChromiumOrSkip } from '../../support/chromium.js';
import { clientBundle } from '../../support/client-bundle.js';
import { committedHistory, proofPageText } from '../../support/committed-history.js';

const run = requireChromiumOrSkip('the in-browser verification test (test/e2e/client/verify-in-browser.test.ts)');

describe.skipIf(!run)('verifyHistory in Chromium', () => {
  let server: Server;
  let base: string;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let party: string;

  beforeAll(async () => {
    const history = await committedHistory();
    party = history.party;
    const honest = proofPageText(history.proofs);
    const tampered = honest.replace('"price":"2002"', '"price":"1"');
    expect(tampered).not.toBe(honest);
    const script = await clientBundle(['GatewayClient', 'sha256Engine', 'useSha256']);
    // The gateway's two routes verifyHistory reads (/honest/… and /tampered/… as two gateways), and the page.
    server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const json = (body: string) => void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      if (url.pathname === '/app.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      if (url.pathname.endsWith('/user-batches')) return json(JSON.stringify({ items: history.batches, nextCursor: null }));
      if (url.pathname.endsWith('/user-batches/proofs')) return json(url.pathname.startsWith('/tampered/') ? tampered : honest);
      const csp = url.pathname === '/strict' ? { 'content-security-policy': "default-src 'self'; script-src 'self'" } : {};
      res.writeHead(200, { 'content-type': 'text/html', ...csp }).end('<!doctype html><script src="/app.js"></script>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  const cases = [
    { page: '/', choose: null, engine: 'wasm', violations: false, what: 'an ordinary page' },
    { page: '/strict', choose: null, engine: 'js', violations: true, what: 'a page whose CSP refuses WebAssembly' },
    { page: '/strict', choose: 'js', engine: 'js', violations: false, what: "a page whose CSP refuses WebAssembly, after useSha256('js')" },
  ] as const;
  for (const { page, choose, engine, violations, what } of cases) {
    it(`on ${what}: hashes with ${engine}, an honest history verified, a tampered one failed`, async () => {
      const tab = await browser.context.newPage();
      const errors: string[] = [];
      tab.on('pageerror', (e) => errors.push(e.message));
      await tab.goto(base + page);
      const result = await tab.evaluate(
        async ({ base, party, choose }) => {
          const g = globalThis as unknown as {
            GatewayClient: new (o: object) => { verifyHistory(p: string): Promise<{ status: string; verified: number; verdicts: Array<{ status: string; step?: string }> }> };
            sha256Engine(): string;
            useSha256(engine: string): string;
          };
          const blocked: string[] = [];
          document.addEventListener('securitypolicyviolation', (e) => blocked.push(e.blockedURI));
          if (choose) g.useSha256(choose);
          const honest = await new g.GatewayClient({ baseUrl: `${base}/honest`, retry: { retries: 0 } }).verifyHistory(party);
          const tampered = await new g.GatewayClient({ baseUrl: `${base}/tampered`, retry: { retries: 0 } }).verifyHistory(party);
          // (A violation is reported by a task queued at the refusal, long before the fetches that follow end.)
          return { engine: g.sha256Engine(), honest: [honest.status, honest.verified], tampered: tampered.verdicts.map((v) => [v.status, v.step ?? null]), violated: blocked.length > 0 };
        },
        { base, party, choose },
      );
      expect(result).toEqual({ engine, honest: ['verified', 2], tampered: [['verified', null], ['failed', 'userRoot']], violated: violations });
      expect(errors).toEqual([]);
      await tab.close();
    });
  }
});
