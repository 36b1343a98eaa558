// A small real HTTP server playing the matching engine, for tests that must force an engine
// behaviour the reference engine would not show on demand: a build below the version floor, a slow
// or broken answer, a wrong token. It speaks the engine contract's /healthz and
// GET /v1/admin/users/:party/orders; `handler` lets a test answer any other route itself.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FLOOR_VERSION = { version: 'c879f7f', buildDate: '2026-08-01' } as const;
export const OLD_VERSION = { version: '5d0e2a1', buildDate: '2026-04-02' } as const;

export type FakeMode =
  | 'ok'
  /** answer after `delayMs` */
  | 'slow'
  /** 500 with an HTML body */
  | 'broken'
  /** 200 whose body is not an order list */
  | 'garbage';

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

export interface FakeEngine {
  url: string;
  port: number;
  adminToken: string;
  /** Non-terminal orders the engine reports per party (engine Order objects). */
  openOrders: Map<string, Array<Record<string, unknown>>>;
  requests: RecordedRequest[];
  mode: FakeMode;
  delayMs: number;
  version: { version: string; buildDate: string };
  /** Markets the engine lists; any other specific market is answered 400 market_unsupported. */
  markets: Set<string>;
  /** Answers routes the fake does not know; return false to fall through to 404. */
  handler: ((req: IncomingMessage, res: ServerResponse) => boolean) | null;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export async function startFakeEngine(options: { old?: boolean; adminToken?: string; port?: number } = {}): Promise<FakeEngine> {
  const timers = new Set<NodeJS.Timeout>();
  const engine: FakeEngine = {
    url: '',
    port: 0,
    adminToken: options.adminToken ?? 'fake-admin-token',
    openOrders: new Map(),
    requests: [],
    mode: 'ok',
    delayMs: 10_000,
    version: options.old ? OLD_VERSION : FLOOR_VERSION,
    markets: new Set(['BTC-PERP', 'ETH-PERP', 'SOL-PERP']),
    handler: null,
    close: async () => {},
  };

  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (url.pathname === '/healthz') return send(res, 200, { ok: true, ...engine.version, maxSeq: 0 });
    const m = /^\/v1\/admin\/users\/([^/]+)\/orders$/.exec(url.pathname);
    if (req.method === 'GET' && m) {
      if (req.headers.authorization !== `Bearer ${engine.adminToken}`) return send(res, 401, { error: 'unauthorized' });
      if (engine.mode === 'broken') {
        res.writeHead(500, { 'content-type': 'text/html' });
        return void res.end('<html><body>internal error</body></html>');
      }
      if (engine.mode === 'garbage') return send(res, 200, { orders: 'nope' });
      const party = decodeURIComponent(m[1]!);
      const market = url.searchParams.get('market');
      const old = engine.version === OLD_VERSION;
      if (old && market === 'all') {
        return send(res, 400, { ok: false, code: 'market_unsupported', error: 'market "all" is not supported by this engine version' });
      }
      if (!old && (market === null || market === '')) {
        return send(res, 400, { ok: false, code: 'market_required', error: 'query parameter market is required' });
      }
      if (market !== null && market !== '' && market !== 'all' && !engine.markets.has(market)) {
        return send(res, 400, { ok: false, code: 'market_unsupported', error: `unknown market ${market}` });
      }
      const orders = (engine.openOrders.get(party) ?? []).filter((o) => market === null || market === 'all' || o.market === market);
      return send(res, 200, { orders });
    }
    if (engine.handler?.(req, res)) return;
    send(res, 404, { ok: false, code: 'not_found', error: 'not found' });
  };

  const server = createServer((req, res) => {
    engine.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => {
      if (engine.mode === 'slow') {
        const t = setTimeout(() => {
          timers.delete(t);
          if (!res.destroyed) answer(req, res);
        }, engine.delayMs);
        timers.add(t);
        return;
      }
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  engine.port = (server.address() as AddressInfo).port;
  engine.url = `http://127.0.0.1:${engine.port}`;
  engine.close = () =>
    new Promise<void>((resolve) => {
      for (const t of timers) clearTimeout(t);
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return engine;
}
