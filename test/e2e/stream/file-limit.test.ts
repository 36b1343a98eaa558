// A replica started under a low open-file limit (prlimit) and flooded with stream connections:
// it refuses the excess with 503 `too_many_connections` before the upgrade, at the limit derived
// from RLIMIT_NOFILE less FD_HEADROOM (src/http/connection-limits.ts), and /healthz and /metrics
// answer throughout. Before, the stream took sockets until the process had no descriptor left,
// and then accepted nothing at all, probes included.
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startScriptedEngine, waitFor, type ScriptedEngine } from '../../support/scripted-sse.js';
import { eventually } from '../../support/eventually.js';

const FILE_LIMIT = 600;
/** The default headroom of a limit of 600: max(256, 5 %). */
const HEADROOM = 256;
const STREAMS = FILE_LIMIT - HEADROOM;
const hasPrlimit = spawnSync('prlimit', ['--version']).status === 0;

type Attempt = { opened: WebSocket } | { status: number; body: string } | { error: string };

function attempt(url: string): Promise<Attempt> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream?kinds=trade`);
    ws.once('open', () => {
      ws.on('error', () => {});
      resolve({ opened: ws });
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', (err) => resolve({ error: err.message }));
  });
}

async function probe(url: string, path: string): Promise<number> {
  try {
    const r = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(5_000) });
    await r.arrayBuffer();
    return r.status;
  } catch {
    return 0;
  }
}

const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

describe.skipIf(!hasPrlimit)(`gateway under a file limit of ${FILE_LIMIT}`, () => {
  let engine: ScriptedEngine | undefined;
  afterAll(async () => engine?.close());

  it('refuses streams past the limit with 503 and keeps answering its probes', async () => {
    engine = await startScriptedEngine();
    const child = spawn('prlimit', [`--nofile=${FILE_LIMIT}:${FILE_LIMIT}`, '--', process.execPath, '--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ENGINE_BASE_URL: engine.url,
        ENGINE_ADMIN_TOKEN: engine.token,
        DATABASE_URL: '',
        WS_MAX_CONNECTIONS_PER_IP: '0',
        HTTP_MAX_CONNECTIONS_PER_IP: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const sockets: WebSocket[] = [];
    try {
      await waitFor(() => /Server listening at http:\/\/127\.0\.0\.1:\d+/.test(out), 40_000, 'listening');
      const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
      const limits = out.split('\n').find((l) => l.includes('connection limits'));
      expect(JSON.parse(limits!)).toMatchObject({ fileLimit: FILE_LIMIT, fdHeadroom: HEADROOM, streams: STREAMS });

      // The probes, every 50 ms while the flood runs.
      let flooding = true;
      const probes: number[] = [];
      const prober = (async () => {
        while (flooding) {
          probes.push(await probe(url, '/healthz'), await probe(url, '/metrics'));
          // Pacing: a probe pair every 50 ms.
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      // More than the process has descriptors for, in waves of 50 at once (a refused socket is
      // closed once its client has read the answer: the next wave comes a moment later; the herd
      // below is the case where they come faster).
      const attempts: Attempt[] = [];
      for (let i = 0; i < 14; i++) {
        attempts.push(...(await Promise.all(Array.from({ length: 50 }, () => attempt(url)))));
        // Pacing: the waves 200 ms apart (above).
        await new Promise((r) => setTimeout(r, 200));
      }
      flooding = false;
      await prober;

      for (const a of attempts) if ('opened' in a) sockets.push(a.opened);
      const refused = attempts.filter((a): a is { status: number; body: string } => 'status' in a);
      expect(attempts.filter((a) => 'error' in a)).toEqual([]);
      expect(sockets).toHaveLength(STREAMS);
      expect(refused).toHaveLength(attempts.length - STREAMS);
      for (const r of refused) {
        expect(r.status).toBe(503);
        expect(JSON.parse(r.body)).toMatchObject({ code: 'too_many_connections' });
      }
      expect(probes.length).toBeGreaterThan(0);
      expect(probes.filter((s) => s !== 200)).toEqual([]);

      // A herd larger than the headroom, all in the same instant: what the HTTP server cannot hold
      // (FD_HEADROOM / 2 above the streams) is closed as it arrives; nothing more is opened, and the
      // process keeps descriptors for its probes once the herd is answered.
      const herd = await Promise.all(Array.from({ length: 400 }, () => attempt(url)));
      expect(herd.filter((a) => 'opened' in a)).toEqual([]);
      for (const a of herd) if ('status' in a) expect(a.status).toBe(503);
      expect(herd.filter((a) => 'status' in a).length).toBeGreaterThan(0);
      // Those closed unanswered are counted.
      const dropped = herd.filter((a) => 'error' in a).length;
      const afterHerd = await (await fetch(`${url}/metrics`)).text();
      expect(metric(afterHerd, 'bff_http_connections_dropped_total')).toBeGreaterThanOrEqual(dropped > 0 ? 1 : 0);

      // Full, and still answering; the gauges an alert reads.
      expect(await probe(url, '/healthz')).toBe(200);
      const text = await (await fetch(`${url}/metrics`)).text();
      expect(metric(text, 'bff_ws_clients')).toBe(STREAMS);
      expect(metric(text, 'bff_ws_connection_limit')).toBe(STREAMS);
      expect(metric(text, 'process_max_fds')).toBe(FILE_LIMIT);
      expect(metric(text, 'process_open_fds')).toBeLessThan(FILE_LIMIT - HEADROOM / 2);

      // A stream closed makes room for one more.
      const closed = new Promise((r) => sockets[0]!.once('close', r));
      sockets[0]!.close();
      await closed;
      await eventually(async () => metric(await (await fetch(`${url}/metrics`)).text(), 'bff_ws_clients') === STREAMS - 1, { everyMs: 100, what: 'bff_ws_clients one less' });
      const again = await attempt(url);
      expect('opened' in again).toBe(true);
      if ('opened' in again) sockets.push(again.opened);
    } finally {
      for (const s of sockets) s.terminate();
      child.kill('SIGKILL');
    }
  }, 120_000);
});
