// Serves the reference web console: bundles app/main.ts with esbuild (the client package resolved
// to its public entry, lightweight-charts from node_modules) and the client's verification worker
// once at start, then answers the page, the bundles and `config.json` (the gateway URL the page
// talks to, across origins like any front end). Used by `npm start` (sandbox/stack/main.ts), the browser test and `npm run bench:console`.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const clientEntry = resolve(here, '../../packages/client/src/index.ts');

const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#161c23"/><path d="M3 11l3-4 3 2 4-5" stroke="#26a69a" stroke-width="2" fill="none"/></svg>';

export interface ConsoleServer {
  url: string;
  /** Bundle size in bytes (minified). */
  bundleBytes: number;
  close(): Promise<void>;
}

/** One minified bundle of `entry` for the browser (esbuild), `@gateway/client` resolved to the package's source. */
async function bundle(entry: string, format: 'esm' | 'iife'): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format,
    target: 'es2022',
    minify: true,
    write: false,
    legalComments: 'inline',
    alias: { '@gateway/client': clientEntry },
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

export const bundleConsole = (): Promise<string> => bundle(resolve(here, 'app/main.ts'), 'esm');

/** The client's verification worker (ADR 0385), one classic script: the page starts it when it first verifies. */
export const bundleVerifyWorker = (): Promise<string> => bundle(resolve(here, '../../packages/client/src/verify-worker.ts'), 'iife');

export async function startConsole(options: { gatewayUrl: string; port?: number; host?: string }): Promise<ConsoleServer> {
  const [bundle, worker] = await Promise.all([bundleConsole(), bundleVerifyWorker()]);
  const html = readFileSync(resolve(here, 'index.html'), 'utf8');
  const config = JSON.stringify({ gateway: options.gatewayUrl });
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (type: string, body: string) => res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    if (path === '/' || path === '/index.html') return send('text/html; charset=utf-8', html);
    if (path === '/app.js') return send('text/javascript; charset=utf-8', bundle);
    if (path === '/verify-worker.js') return send('text/javascript; charset=utf-8', worker);
    if (path === '/config.json') return send('application/json', config);
    // The page's icon (a browser asks for one on every load; a 404 there is a console error).
    if (path === '/favicon.svg' || path === '/favicon.ico') return send('image/svg+xml', FAVICON);
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, host, ok);
  });
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}/`,
    bundleBytes: Buffer.byteLength(bundle),
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
