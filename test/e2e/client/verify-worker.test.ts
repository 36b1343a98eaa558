// The verification worker (ADR 0385): pages of proofs fetched, read and hashed off the main
// thread give the verdicts the main thread gives, for an honest history, a tampered one and one
// written in another (valid, not canonical) layout; a refusal or a network error comes out as the
// same GatewayError; and a worker that cannot serve (not a verification worker, a script that does
// not load, a page whose policy refuses workers) leaves its pages to the main thread, which
// verifies as before. In Node over a MessageChannel's ports, and in Chromium with a real Worker.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayClient } from '../../../packages/client/src/client.js';
import { GatewayError } from '../../../packages/client/src/errors.js';
import { fetchSender, Transport } from '../../../packages/client/src/transport.js';
import { scanPage } from '../../../packages/client/src/verify/page-scan.js';
import { servePageRequests, type MessageEndpoint } from '../../../packages/client/src/verify/page-worker.js';
import { workerSender, type VerifyWorker } from '../../../packages/client/src/verify/worker-sender.js';
import { launchBrowser, requireChromiumOrSkip } from '../../support/chromium.js';
import { clientBundle, verifyWorkerBundle } from '../../support/client-bundle.js';
import { committedHistory, proofPageText } from '../../support/committed-history.js';

let server: Server;
let base: string;
let party: string;
const pages: Record<string, string> = {};

beforeAll(async () => {
  const history = await committedHistory();
  party = history.party;
  const honest = proofPageText(history.proofs);
  pages.honest = honest;
  pages.tampered = honest.replace('"price":"2002"', '"price":"1"');
  // The same values laid out otherwise: its bytes do not hash to the chain's roots, so each batch
  // is judged on the canonical form of its parsed events (ADR 0370), and verifies.
  pages.spaced = JSON.stringify(JSON.parse(honest) as unknown, null, 1);
  expect(pages.tampered).not.toBe(honest);
  const [script, worker] = await Promise.all([clientBundle(['GatewayClient']), verifyWorkerBundle()]);
  // /<variant>/v1/users/:party/user-batches(/proofs) as gateways, /busy/… answers 503, and the pages.
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const variant = url.pathname.split('/')[1]!;
    const send = (status: number, type: string, body: string, headers: Record<string, string> = {}) =>
      void res.writeHead(status, { 'content-type': type, 'access-control-allow-origin': '*', ...headers }).end(body);
    if (url.pathname === '/app.js') return send(200, 'text/javascript', script);
    if (url.pathname === '/verify-worker.js') return send(200, 'text/javascript', worker);
    if (url.pathname.endsWith('/user-batches')) return send(200, 'application/json', JSON.stringify({ items: history.batches, nextCursor: null }));
    if (url.pathname.endsWith('/user-batches/proofs')) {
      if (variant === 'busy') return send(503, 'application/json', JSON.stringify({ error: 'the database is unavailable', code: 'db_unavailable' }));
      return send(200, 'application/json', pages[variant]!);
    }
    if (url.pathname.endsWith('.js')) return send(404, 'text/plain', 'not found');
    const csp: Record<string, string> = url.pathname === '/no-workers' ? { 'content-security-policy': "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'none'; connect-src *" } : {};
    send(200, 'text/html', '<!doctype html><script src="/app.js"></script>', csp);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server?.close();
});

/** A verification worker on one port of a channel, the client's side on the other. */
function channelWorker(): { worker: VerifyWorker; close(): void } {
  const { port1, port2 } = new MessageChannel();
  servePageRequests(port1 as unknown as MessageEndpoint);
  return {
    worker: port2 as unknown as VerifyWorker,
    close() {
      port1.close();
      port2.close();
    },
  };
}

type Verdicts = Array<[string, string | null]>;
const verdictsOf = (v: { verdicts: Array<{ status: string; step?: string }> }): Verdicts => v.verdicts.map((x) => [x.status, x.step ?? null]);

describe('the verification worker over a MessageChannel', () => {
  for (const variant of ['honest', 'tampered', 'spaced'] as const) {
    it(`gives the main thread's verdicts on the ${variant} page, from the scan it made`, async () => {
      const { worker, close } = channelWorker();
      try {
        const viaWorker = new GatewayClient({ baseUrl: `${base}/${variant}`, retry: { retries: 0 }, verifyWorker: worker });
        const plain = new GatewayClient({ baseUrl: `${base}/${variant}`, retry: { retries: 0 } });
        // The worker's answer: the page's bytes and the scan the main thread would make of them.
        const page = await viaWorker.getUserBatchProofPage(party);
        const alone = await plain.getUserBatchProofPage(party);
        expect(new TextDecoder().decode(page.bytes)).toBe(pages[variant]);
        expect(page.scan).toEqual(scanPage(alone.bytes));
        expect('scan' in alone).toBe(false);
        const [a, b] = [await viaWorker.verifyHistory(party), await plain.verifyHistory(party)];
        expect(verdictsOf(a)).toEqual(verdictsOf(b));
        expect(verdictsOf(a)).toEqual(variant === 'tampered' ? [['verified', null], ['failed', 'userRoot']] : [['verified', null], ['verified', null]]);
      } finally {
        close();
      }
    });
  }

  it("answers a refusal and a network error as the main thread's fetch does", async () => {
    const { worker, close } = channelWorker();
    try {
      const refused = await new GatewayClient({ baseUrl: `${base}/busy`, retry: { retries: 0 }, verifyWorker: worker }).getUserBatchProofPage(party).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(GatewayError);
      expect([(refused as GatewayError).status, (refused as GatewayError).code]).toEqual([503, 'db_unavailable']);
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      const unreachable = await new GatewayClient({ baseUrl: `http://127.0.0.1:${port}`, retry: { retries: 0 }, verifyWorker: worker }).getUserBatchProofPage(party).catch((e: unknown) => e);
      expect(unreachable).toBeInstanceOf(GatewayError);
      expect([(unreachable as GatewayError).status, (unreachable as GatewayError).code]).toEqual([0, 'network_error']);
    } finally {
      close();
    }
  });

  it('leaves the pages to the main thread when the other end is not a verification worker', async () => {
    const { port1, port2 } = new MessageChannel();
    port1.start(); // listens, never answers
    try {
      const transport = new Transport(`${base}/honest`, undefined, fetchSender());
      const sender = workerSender(port2 as unknown as VerifyWorker, fetchSender(), 200);
      const started = performance.now();
      const page = await transport.callBytes({ method: 'GET', path: `/v1/users/${encodeURIComponent(party)}/user-batches/proofs`, sender });
      expect(new TextDecoder().decode(page.bytes)).toBe(pages.honest);
      expect('scan' in page).toBe(false);
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      port1.close();
      port2.close();
    }
  });

  it('starts a worker given as a function when a verification first begins, and only once', async () => {
    let made = 0;
    const channels: Array<{ close(): void }> = [];
    const client = new GatewayClient({
      baseUrl: `${base}/honest`,
      retry: { retries: 0 },
      verifyWorker: () => {
        made++;
        const c = channelWorker();
        channels.push(c);
        return c.worker;
      },
    });
    try {
      await client.listUserBatches(party);
      expect(made).toBe(0);
      expect(verdictsOf(await client.verifyHistory(party))).toEqual([['verified', null], ['verified', null]]);
      expect(verdictsOf(await client.verifyHistory(party))).toEqual([['verified', null], ['verified', null]]);
      expect(made).toBe(1);
    } finally {
      for (const c of channels) c.close();
    }
  });
});

const run = requireChromiumOrSkip('the verification worker in Chromium (test/e2e/client/verify-worker.test.ts)');

describe.skipIf(!run)('the verification worker in Chromium', () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  const cases = [
    { page: '/', worker: '/verify-worker.js', inWorker: true, what: 'an ordinary page, its pages fetched and hashed in the worker' },
    { page: '/', worker: '/missing-worker.js', inWorker: false, what: 'a page whose worker script does not load, its pages left to the main thread' },
    { page: '/no-workers', worker: '/verify-worker.js', inWorker: false, what: 'a page whose policy refuses workers, its pages left to the main thread' },
  ] as const;
  for (const { page, worker, inWorker, what } of cases) {
    it(`on ${what}: an honest history verified, a tampered one failed`, async () => {
      const tab = await browser.context.newPage();
      const errors: string[] = [];
      tab.on('pageerror', (e) => errors.push(e.message));
      await tab.goto(base + page);
      const result = await tab.evaluate(
        async ({ base, party, worker }) => {
          type Verdict = { status: string; verified: number; verdicts: Array<{ status: string; step?: string }> };
          const g = globalThis as unknown as { GatewayClient: new (o: object) => { verifyHistory(p: string): Promise<Verdict> } };
          const verifyWorker = () => new Worker(worker);
          const started = performance.now();
          const honest = await new g.GatewayClient({ baseUrl: `${base}/honest`, retry: { retries: 0 }, verifyWorker }).verifyHistory(party);
          const tampered = await new g.GatewayClient({ baseUrl: `${base}/tampered`, retry: { retries: 0 }, verifyWorker }).verifyHistory(party);
          // A fetch the worker makes is in its own timeline, not the page's.
          const onMain = performance.getEntriesByType('resource').filter((e) => e.name.includes('/user-batches/proofs')).length;
          // A worker that cannot serve is known at once (its error, the refused constructor), not after the 10 s wait for its protocol.
          const prompt = performance.now() - started < 5_000;
          return { honest: [honest.status, honest.verified], tampered: tampered.verdicts.map((v) => [v.status, v.step ?? null]), onMain, prompt };
        },
        { base, party, worker },
      );
      expect(result).toEqual({ honest: ['verified', 2], tampered: [['verified', null], ['failed', 'userRoot']], onMain: inWorker ? 0 : 2, prompt: true });
      expect(errors).toEqual([]);
      await tab.close();
    });
  }
});
