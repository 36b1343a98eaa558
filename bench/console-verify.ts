/**
 * The verification part of `npm run bench:console` (docs/verification.md): a trader's browser
 * verifying 1 000 user batches holding 100 000 events, in Debian's Chromium, with the published
 * client's verifyUserBatch (WebCrypto SHA-256), 8 batches at a time as verifyHistory runs them.
 * The proofs are built here with the gateway's own commitment code (valid batches: realistic
 * envelopes, manifests of 8 user batches) and handed to the page before the clock starts, so the
 * figure is the verification alone (fetching the proofs is the proof route's cost: bench:rest).
 * Floor, same run, same page: WebCrypto digests of the same leaf inputs alone (one digest per
 * event, no JSON, no tree). `BENCH_CONSOLE_ONLY=verify` runs only this part.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { launchBrowser } from '../test/support/chromium.js';
import { manifestPath, manifestRoot, userBatchRoot } from '../src/commitments/hash.js';
import { ZERO_ROOT } from '../packages/client/src/verify/scheme.js';
import type { EngineEvent } from '../src/contracts/engine-event.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BATCHES = 1_000;
const EVENTS_PER_BATCH = 100;
const PER_MANIFEST = 8;
const PARTY = `trader-7::${'7'.repeat(64)}`;
const OTHER = `maker-1::${'1'.repeat(64)}`;

function eventAt(seq: number): EngineEvent {
  const ts = new Date(Date.UTC(2026, 10, 20) + seq * 250).toISOString();
  const orderId = `o-${seq}`;
  if (seq % 4 === 0) {
    const leg = (party: string, role: string, side: string) => ({
      entryPrice: '60000.0000000000', fee: '0.3000000000', newBalance: '100000.0000000000', orderId, party, positionId: `pos-${party.slice(0, 5)}`,
      positionSize: '0.0100000000', price: '60000.5000000000', realizedPnl: '0.0000000000', role, side, size: '0.0100000000',
    });
    return { kind: 'engine.order_filled', market: 'BTC-PERP', payload: { legs: [leg(PARTY, 'taker', 'buy'), leg(OTHER, 'maker', 'sell')], makerOrderId: `m-${seq}`, matchId: `x-${seq}`, price: '60000.5000000000', size: '0.0100000000', takerOrderId: orderId, takerSide: 'buy' }, seq, ts } as EngineEvent;
  }
  if (seq % 4 === 1) return { kind: 'inbound.order', market: 'BTC-PERP', party: PARTY, payload: { clientOrderId: `c-${seq}`, request: { market: 'BTC-PERP', price: '60000.5', side: 'buy', size: '0.01', type: 'limit' } }, seq, ts } as EngineEvent;
  if (seq % 4 === 2) return { kind: 'engine.order_placed', market: 'BTC-PERP', party: PARTY, payload: { order: { avgPrice: null, clientOrderId: `c-${seq}`, createdAt: ts, filledSize: '0.0000000000', market: 'BTC-PERP', orderId, party: PARTY, price: '60000.5000000000', reduceOnly: false, seq, side: 'buy', size: '0.0100000000', sl: null, status: 'open', tif: 'gtc', tp: null, type: 'limit', updatedAt: ts } }, seq, ts } as EngineEvent;
  return { kind: 'engine.order_cancelled', market: 'BTC-PERP', party: PARTY, payload: { orderId, reason: 'user' }, seq, ts } as EngineEvent;
}

/** 1 000 valid proofs of the party's consecutive user batches. */
function buildProofs(): unknown[] {
  const proofs: unknown[] = [];
  let seq = 0;
  let prevRoot = ZERO_ROOT;
  for (let m = 0; m < BATCHES / PER_MANIFEST; m++) {
    const members: Array<{ party: string; root: string; events?: EngineEvent[] }> = [];
    for (let i = 0; i < PER_MANIFEST; i++) {
      const events = Array.from({ length: EVENTS_PER_BATCH }, () => eventAt(++seq));
      // Each manifest holds other parties' user roots too (ids sort after the trader's).
      members.push({ party: `${PARTY}-${String(i).padStart(2, '0')}`, root: userBatchRoot(events), events });
    }
    const roots = members.map((x) => x.root);
    const root = manifestRoot(roots);
    members.forEach((member, i) => {
      proofs.push({
        party: PARTY,
        userSeq: proofs.length + 1,
        status: 'verified',
        events: member.events,
        chain: { userRoot: member.root, prevRoot, eventCount: EVENTS_PER_BATCH, batchNum: m + 1, txId: 'ab'.repeat(32), committedAt: new Date().toISOString(), manifestRoot: root },
        path: manifestPath(roots, i),
      });
      prevRoot = member.root;
    });
  }
  return proofs;
}

export interface VerifyBenchResult {
  batches: number;
  events: number;
  verifyMs: number;
  floorMs: number;
  verified: number;
}

export async function consoleVerifyBench(): Promise<VerifyBenchResult> {
  const load = loadavg().map((l) => l.toFixed(1)).join(' / ');
  const bundle = await build({
    stdin: {
      contents: `import { verifyUserBatch } from './verify/verify-batch.ts'; import { leafText } from './verify/scheme.ts'; Object.assign(globalThis, { verifyUserBatch, leafText });`,
      resolveDir: join(ROOT, 'packages/client/src'),
      loader: 'ts',
    },
    bundle: true,
    format: 'iife',
    target: 'es2022',
    write: false,
  });
  const script = bundle.outputFiles[0]!.text;
  const proofs = JSON.stringify(buildProofs());
  const server = createServer((req, res) => {
    if (req.url === '/verify.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    if (req.url === '/proofs.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(proofs);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><script src="/verify.js"></script>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const browser = await launchBrowser();
  try {
    const page = await browser.context.newPage();
    // tsx compiles the evaluated function with esbuild's keepNames, whose __name helper the page lacks.
    await page.addInitScript('globalThis.__name = (f) => f;');
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const result = await page.evaluate(async () => {
      const g = globalThis as unknown as {
        verifyUserBatch: (p: unknown) => Promise<{ status: string }>;
        leafText: (e: unknown) => string;
      };
      const proofs = (await (await fetch('/proofs.json')).json()) as Array<{ events: unknown[] }>;
      const pool = async <T>(items: T[], n: number, f: (x: T) => Promise<unknown>) => {
        let next = 0;
        await Promise.all(Array.from({ length: n }, async () => {
          while (next < items.length) await f(items[next++]!);
        }));
      };
      // Floor: one WebCrypto digest per event of the same leaf input, batch by batch, 8 batches at a time.
      const enc = new TextEncoder();
      const t0 = performance.now();
      const inputs = proofs.map((p) => p.events.map((e) => enc.encode(`\u0000${g.leafText(e)}`)));
      const runs = { verify: [] as number[], floor: [] as number[], verified: 0, encodeMs: performance.now() - t0 };
      for (let round = 0; round < 3; round++) {
        let t = performance.now();
        await pool(inputs, 8, (batch) => Promise.all(batch.map((b) => crypto.subtle.digest('SHA-256', b))));
        runs.floor.push(performance.now() - t);
        t = performance.now();
        let verified = 0;
        await pool(proofs, 8, async (p) => {
          if ((await g.verifyUserBatch(p)).status === 'verified') verified++;
        });
        runs.verify.push(performance.now() - t);
        runs.verified = verified;
      }
      return runs;
    });
    const out: VerifyBenchResult = {
      batches: BATCHES,
      events: BATCHES * EVENTS_PER_BATCH,
      verifyMs: Math.round(Math.min(...result.verify)),
      floorMs: Math.round(Math.min(...result.floor)),
      verified: result.verified,
    };
    console.error(`leaf texts and their UTF-8 encoding: ${Math.round(result.encodeMs)} ms`);
    const version = await browser.context.browser()?.version();
    const block = [
      '<!-- console-verify-bench:start -->',
      '## Verifying a history in the browser (`npm run bench:console`, `BENCH_CONSOLE_ONLY=verify` for this part alone)',
      '',
      `Measured ${new Date().toISOString().slice(0, 10)} in headless Chromium ${version ?? ''} on ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown'}, load average ${load} at start (the 2 cores are shared with other work).`,
      '',
      '| Measure | Result | Target |',
      '|---|---|---|',
      `| \`verifyUserBatch\` over ${out.batches.toLocaleString('en-US')} user batches, ${out.events.toLocaleString('en-US')} events (8 batches at a time, as \`verifyHistory\`), best of 3 | ${out.verifyMs} ms (${out.verified} verified) | < 2 000 ms |`,
      `| Floor: one WebCrypto SHA-256 digest per event of the same leaf inputs, no JSON, no tree | ${out.floorMs} ms | |`,
      `| Ratio | ${(out.verifyMs / Math.max(1, out.floorMs)).toFixed(2)} × the floor | |`,
      '',
      'The verification is canonical JSON of each envelope (native JSON.stringify when its members are already sorted), one digest per leaf',
      'and per inner node, the path fold, and the comparisons. Since ADR 0064 a batch\'s leaf texts are UTF-8 encoded in one call into one',
      'buffer and every digest of a tree level is requested at once through views into one buffer (no per-leaf or per-node encoding, copy',
      'or await): WebCrypto only, so the digests themselves (about two per event: the leaves and the inner nodes) are the floor that stays.',
      'The proofs are in the page before the clock starts; fetching them is the proof route (see the proof bench), 8 at a time in `verifyHistory`.',
      '<!-- console-verify-bench:end -->',
    ].join('\n');
    console.log(block);
    const file = join(ROOT, 'docs/performance.md');
    let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const start = text.indexOf('<!-- console-verify-bench:start -->');
    const end = text.indexOf('<!-- console-verify-bench:end -->');
    if (start >= 0 && end > start) text = text.slice(0, start) + block + text.slice(end + '<!-- console-verify-bench:end -->'.length);
    else text = `${text.replace(/\n*$/, '\n\n')}${block}\n`;
    writeFileSync(file, text);
    return out;
  } finally {
    await browser.close();
    server.close();
  }
}
