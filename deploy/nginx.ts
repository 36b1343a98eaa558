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
  /**
   * The replicas' HTTP_KEEP_ALIVE_TIMEOUT_MS: nginx closes an idle connection to a replica after
   * `proxyIdleTimeoutMs` of it, before the replica would (REPLICA_KEEP_ALIVE_MS where shipped).
   */
  replicaKeepAliveMs: number;
}

/** The replicas' HTTP_KEEP_ALIVE_TIMEOUT_MS in every shipped manifest (deploy/kubernetes, deploy/systemd, `npm run fleet`). */
export const REPLICA_KEEP_ALIVE_MS = 75_000;

/**
 * How long whatever holds connections to a replica (nginx, an ingress, a cloud balancer) may keep
 * one idle: 80 % of the replica's keep-alive timeout, so the proxy always closes first. A request
 * written on a connection the replica is closing gets no answer, and a signed call cannot be sent
 * again: nginx answers it 502 (docs/operations.md "Keep-alive"). 75 s gives 60 s, the usual default
 * of ingress-nginx and cloud balancers.
 */
export function proxyIdleTimeoutMs(replicaKeepAliveMs: number): number {
  return Math.floor(replicaKeepAliveMs * 0.8);
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
// A refusal while nginx reads the request line or headers (400, 414, 494: too large) has no URI yet,
// and a named location needs one: those go to internal URI pages (location ^~ /.lb-error/).
const ERROR_PAGES = [
  '    error_page 429 = @too_many_connections;',
  ...['404', '405', '408', '413', '500', '501', '502', '503', '504'].map((c) => `    error_page ${c} = @e${c};`),
  '    error_page 400 /.lb-error/400;',
  '    error_page 414 /.lb-error/414;',
  '    error_page 494 =431 /.lb-error/494;',
].join('\n');

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
    .replaceAll('{{UPSTREAM_KEEPALIVE_TIMEOUT}}', `${proxyIdleTimeoutMs(o.replicaKeepAliveMs)}ms`)
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
