// Renders deploy/nginx/gateway.conf.template for a set of local replicas and runs nginx as the
// current user from a temporary prefix (no root, nothing written outside it). Used by `npm run
// fleet`, the fleet tests and the fleet benchmark.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'node:net';

const TEMPLATE = resolve(dirname(fileURLToPath(import.meta.url)), 'nginx/gateway.conf.template');

export interface NginxOptions {
  /** 127.0.0.1:<port> */
  listen: string;
  /** host:port of each replica */
  upstreams: string[];
  workers?: number;
  /** Per worker; keep it under the open-file limit. */
  workerConnections?: number;
  /** Concurrent connections per client address (nginx limit_conn; 0: none). Default 512, as HTTP_MAX_CONNECTIONS_PER_IP. */
  maxConnectionsPerClient?: number;
  /** The temp directory (made when absent). */
  prefix?: string;
}

export function nginxBinary(): string | null {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx']) {
    try {
      execFileSync(p, ['-v'], { stdio: 'ignore' });
      return p;
    } catch {
      /* next */
    }
  }
  return null;
}

/** nginx's own errors sent to the JSON pages of the template (repeated in every level with an error_page of its own). */
const ERROR_PAGES = ['    error_page 429 = @too_many_connections;', ...['413', '500', '502', '503', '504'].map((c) => `    error_page ${c} = @e${c};`)].join('\n');

export function renderNginxConfig(o: NginxOptions & { prefix: string }): string {
  const servers = o.upstreams.map((u) => `    server ${u} max_fails=1 fail_timeout=2s;`).join('\n');
  // Started by root (CI, containers), nginx would switch its workers to `nobody`, who cannot write
  // the temp prefix: keep them as the current user.
  const user = process.getuid?.() === 0 ? `user ${userInfo().username};` : '';
  const perClient = o.maxConnectionsPerClient ?? 512;
  return readFileSync(TEMPLATE, 'utf8')
    .replaceAll('{{LIMIT_CONN}}', perClient > 0 ? `    limit_conn per_client ${perClient};` : '')
    .replaceAll('{{USER}}', user)
    .replaceAll('{{WORKERS}}', String(o.workers ?? 1))
    .replaceAll('{{WORKER_CONNECTIONS}}', String(o.workerConnections ?? 16_384))
    .replaceAll('{{PREFIX}}', o.prefix)
    .replaceAll('{{LISTEN}}', o.listen)
    .replaceAll('{{UPSTREAM_SERVERS}}', servers)
    .replaceAll('{{ERROR_PAGES}}', ERROR_PAGES);
}

export interface RunningNginx {
  url: string;
  prefix: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

function listening(hostPort: string): Promise<boolean> {
  const [host, port] = hostPort.split(':') as [string, string];
  return new Promise((r) => {
    const s = connect({ host, port: Number(port) });
    s.once('connect', () => {
      s.destroy();
      r(true);
    });
    s.once('error', () => r(false));
  });
}

export async function startNginx(o: NginxOptions): Promise<RunningNginx> {
  const bin = nginxBinary();
  if (!bin) throw new Error('nginx is not installed (apt-get install -y nginx)');
  const prefix = o.prefix ?? mkdtempSync(join(tmpdir(), 'gateway-nginx-'));
  mkdirSync(prefix, { recursive: true });
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(conf, renderNginxConfig({ ...o, prefix }));
  const proc = spawn(bin, ['-p', prefix, '-c', conf, '-e', join(prefix, 'error.log')], { stdio: ['ignore', 'inherit', 'inherit'] });
  let exited = false;
  const exit = new Promise<void>((r) => proc.once('exit', () => ((exited = true), r())));
  const deadline = Date.now() + 10_000;
  while (!(await listening(o.listen))) {
    if (exited) throw new Error(`nginx exited at start; see ${join(prefix, 'error.log')}`);
    if (Date.now() > deadline) throw new Error('nginx did not listen within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `http://${o.listen}`,
    prefix,
    proc,
    async stop() {
      if (!exited) proc.kill('SIGQUIT'); // graceful: finishes requests in flight
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      await exit;
      clearTimeout(timer);
      if (!o.prefix) rmSync(prefix, { recursive: true, force: true });
    },
  };
}
