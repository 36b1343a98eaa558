// The gateway process as an operator runs it, traces turned on by the standard OTEL_* variables
// only: a real OTLP/HTTP export (JSON encoding) arrives at a small receiver on a loopback port, with
// the service name and the request span; SIGTERM flushes before exit. Without the variables the
// process never resolves an OpenTelemetry SDK module (a preloaded resolve hook reports each one).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../support/eventually.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const PROBE = join(ROOT, 'test', 'support', 'otel-load-probe.mjs');

interface OtlpSpan {
  name: string;
  traceId: string;
  parentSpanId?: string;
  kind: number;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}
interface OtlpExport {
  resourceSpans: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
}

let receiver: Server;
let receiverUrl: string;
const exports: Array<{ path: string; contentType: string | undefined; body: OtlpExport }> = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      exports.push({ path: req.url ?? '', contentType: req.headers['content-type'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => receiver?.close(r));
});

async function freePort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function startGatewayProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', PROBE, 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PORT: String(port), LOG_LEVEL: 'warn', ENGINE_BASE_URL: 'http://127.0.0.1:9', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    async () => {
      if (child.exitCode !== null) throw new Error(`gateway did not start: ${stderr}`);
      return fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    },
    { timeoutMs: 20_000, everyMs: 50, what: () => `the gateway started (stderr: ${stderr})` },
  );
  return { child, url, stderr: () => stderr };
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  return code;
}

function spans(): Array<OtlpSpan & { service: string | undefined }> {
  return exports.flatMap((e) =>
    e.body.resourceSpans.flatMap((rs) => {
      const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
      return rs.scopeSpans.flatMap((ss) => ss.spans.map((s) => ({ ...s, service })));
    }),
  );
}

describe('OTLP/HTTP export from the gateway process', () => {
  it('exports the request span to OTEL_EXPORTER_OTLP_ENDPOINT, continuing the caller trace, and flushes on SIGTERM', async () => {
    const gw = await startGatewayProcess({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'gateway-under-test',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '1',
    });
    try {
      const traceId = 'a3ce929d0e0e47364bf92f3577b34da6';
      const res = await fetch(`${gw.url}/v1/time`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } });
      expect(res.status).toBe(200);
      // The batch processor exports on its own schedule; SIGTERM must flush whatever is left.
      expect(await stop(gw.child)).toBe(0);
      const exported = spans().filter((s) => s.traceId === traceId);
      expect(exported.map((s) => ({ name: s.name, parent: s.parentSpanId, service: s.service, kind: s.kind }))).toEqual([
        { name: 'GET /v1/time', parent: '00f067aa0ba902b7', service: 'gateway-under-test', kind: 2 },
      ]);
      expect(exports.every((e) => e.path === '/v1/traces' && e.contentType === 'application/json')).toBe(true);
      expect(gw.stderr()).toContain('otel-sdk-loaded @opentelemetry/sdk-node');
    } finally {
      await stop(gw.child);
    }
  }, 60_000);

  it('loads no OpenTelemetry SDK module when no OTEL_* variable turns traces on', async () => {
    const gw = await startGatewayProcess({});
    try {
      expect((await fetch(`${gw.url}/v1/time`)).status).toBe(200);
      expect(await stop(gw.child)).toBe(0);
      expect(gw.stderr()).not.toContain('otel-sdk-loaded');
    } finally {
      await stop(gw.child);
    }
  }, 60_000);

  it('OTEL_SDK_DISABLED=true wins over an endpoint; a bad sampler stops the start with one line', async () => {
    const disabled = await startGatewayProcess({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl });
    expect(await stop(disabled.child)).toBe(0);
    expect(disabled.stderr()).not.toContain('otel-sdk-loaded');
    const bad = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', OTEL_TRACES_SAMPLER: 'sometimes' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    bad.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(bad, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(stderr.trim().split('\n')).toEqual([expect.stringContaining('OTEL_TRACES_SAMPLER')]);
  }, 60_000);
});
