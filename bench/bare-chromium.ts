// The first verifyAccount as a trader's browser makes it: Chromium started with nothing attached to
// it (no DevTools client, as Playwright is), the page posting its timing back. Under Playwright the
// same first verification took 0.3-0.9 s longer on the bench's machine (ADR 0386): its Network and
// Runtime domains, attached to the page and to the worker, do work for the inspector that a trader's
// browser never does. Each run is a fresh browser with a fresh profile, its first verification.
//
// Where the browser is when the page opens (ADR 0387):
//   settled   the browser opens a waiting page of another site (localhost) and, once the machine is
//             quiet again after its start-up, goes to the verification page (127.0.0.1): a fresh
//             page, in a renderer of its own, in a browser that is running, as a trader's is when
//             they open the console;
//   launched  the browser is started on the verification page itself, whose verification then
//             shares the 2 cores of the bench's machine with the browser's own start-up (about a
//             second of full load after launch there: about 0.6 s more for the same verification).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/support/chromium.js';

export interface BareRun {
  ms: number;
  status: string;
  /** settled: how long the machine took to be quiet after the browser started (ms). */
  settledMs?: number;
}

export type BrowserState = 'settled' | 'launched';

/** The machine's busy share (0 to 1) over the next `ms`, from every core's times. */
async function busyOver(ms: number): Promise<number> {
  const sum = () => cpus().reduce((a, c) => ({ idle: a.idle + c.times.idle, total: a.total + c.times.user + c.times.nice + c.times.sys + c.times.irq + c.times.idle }), { idle: 0, total: 0 });
  const before = sum();
  await new Promise((r) => setTimeout(r, ms));
  const after = sum();
  const total = after.total - before.total;
  return total > 0 ? 1 - (after.idle - before.idle) / total : 0;
}

/** Waits until the machine is quiet (under a quarter busy over 250 ms), at least `minMs`, at most `maxMs`; the ms waited. */
export async function quiet(minMs = 1_000, maxMs = 15_000): Promise<number> {
  const t = performance.now();
  await new Promise((r) => setTimeout(r, minMs));
  while (performance.now() - t < maxMs && (await busyOver(250)) >= 0.25);
  return Math.round(performance.now() - t);
}

/**
 * `runs` fresh Chromiums, each loading a page that makes one GatewayClient (with the verification
 * worker, as the console does) and times its first `verifyAccount(party)` against `gatewayUrl`.
 * `script` is the client bundle (GatewayClient on globalThis), `worker` the worker's.
 */
export async function firstInBareChromium(options: {
  script: string;
  worker: string;
  gatewayUrl: string;
  party: string;
  runs: number;
  browser?: BrowserState;
  /** settled: the longest wait for a quiet machine (ms; a busy machine goes on after it). */
  settleMaxMs?: number;
  timeoutMs?: number;
}): Promise<BareRun[]> {
  const state = options.browser ?? 'settled';
  let report: (body: string) => void = () => {};
  let settledMs: number | undefined;
  let url = ''; // the verification page's, once the server listens
  const run = `
    setTimeout(async () => {
      const client = new GatewayClient({ baseUrl: ${JSON.stringify(options.gatewayUrl)}, retry: { retries: 0 }, verifyWorker: () => new Worker('/verify-worker.js') });
      let out;
      try {
        const t = performance.now();
        const v = await client.verifyAccount(${JSON.stringify(options.party)});
        out = { ms: performance.now() - t, status: v.status };
      } catch (err) {
        out = { ms: NaN, status: 'error: ' + (err && err.message) };
      }
      await fetch('/result', { method: 'POST', body: JSON.stringify(out) });
    }, 200);`;
  const server = createServer((req, res) => {
    // settled: the waiting page asks to go on; answered once the machine is quiet.
    if (req.url === '/go') return void quiet(1_000, options.settleMaxMs).then((ms) => ((settledMs = ms), res.end('go')));
    if (req.url === '/wait') return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><script>fetch('/go').then(() => location.replace(${JSON.stringify(url)}));</script>`);
    if (req.url === '/verify.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(options.script);
    if (req.url === '/verify-worker.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(options.worker);
    if (req.url === '/result') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.end('ok');
        report(body);
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><script>globalThis.__name = (f) => f;</script><script src="/verify.js"></script><script>${run}</script>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${port}/`;
  // Another site than the verification page's (a name, not the address): a renderer of its own.
  const start = state === 'settled' ? `http://localhost:${port}/wait` : url;
  const out: BareRun[] = [];
  try {
    for (let i = 0; i < options.runs; i++) {
      const profile = mkdtempSync(join(tmpdir(), 'bench-chromium-'));
      const reported = new Promise<string>((resolve, reject) => {
        report = resolve;
        setTimeout(() => reject(new Error(`no result from the page within ${options.timeoutMs ?? 90_000} ms`)), options.timeoutMs ?? 90_000).unref();
      });
      settledMs = undefined;
      const child = spawn(CHROMIUM, [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, start], { stdio: 'ignore' });
      const exited = new Promise((r) => child.once('exit', r));
      try {
        const run = JSON.parse(await reported) as BareRun;
        out.push(state === 'settled' ? { ...run, settledMs } : run);
      } finally {
        child.kill();
        await exited;
        // The browser's own process has exited, its renderer and utility processes not always yet:
        // one still writing into the profile made a plain removal fail (ENOTEMPTY, seen in CI).
        rmSync(profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
      }
    }
  } finally {
    server.close();
  }
  return out;
}
