// The first verifyAccount as a trader's browser makes it: Chromium started with nothing attached to
// it (no DevTools client, as Playwright is), the page posting its timing back. Under Playwright the
// same first verification took 0.3-0.9 s longer on the bench's machine (ADR 0386): its Network and
// Runtime domains, attached to the page and to the worker, do work for the inspector that a trader's
// browser never does. Each run is a fresh browser with a fresh profile, its first verification.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM, CHROMIUM_ARGS } from '../test/support/chromium.js';

export interface BareRun {
  ms: number;
  status: string;
}

/**
 * `runs` fresh Chromiums, each loading a page that makes one GatewayClient (with the verification
 * worker, as the console does) and times its first `verifyAccount(party)` against `gatewayUrl`.
 * `script` is the client bundle (GatewayClient on globalThis), `worker` the worker's.
 */
export async function firstInBareChromium(options: { script: string; worker: string; gatewayUrl: string; party: string; runs: number; timeoutMs?: number }): Promise<BareRun[]> {
  let report: (body: string) => void = () => {};
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
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const out: BareRun[] = [];
  try {
    for (let i = 0; i < options.runs; i++) {
      const profile = mkdtempSync(join(tmpdir(), 'bench-chromium-'));
      const reported = new Promise<string>((resolve, reject) => {
        report = resolve;
        setTimeout(() => reject(new Error(`no result from the page within ${options.timeoutMs ?? 60_000} ms`)), options.timeoutMs ?? 60_000).unref();
      });
      const child = spawn(CHROMIUM, [...CHROMIUM_ARGS, `--user-data-dir=${profile}`, url], { stdio: 'ignore' });
      const exited = new Promise((r) => child.once('exit', r));
      try {
        out.push(JSON.parse(await reported) as BareRun);
      } finally {
        child.kill();
        await exited;
        rmSync(profile, { recursive: true, force: true });
      }
    }
  } finally {
    server.close();
  }
  return out;
}
