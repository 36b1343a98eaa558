// Prometheus for `npm run fleet -- --observe` and its tests: Debian's binary run as this user from a
// data directory, on loopback, scraping the replicas (job trading-gateway) and the relays (job
// trading-gateway-relay) every second with the alert rules of deploy/observability/. Locally every
// rule's `for:` is shortened to FLEET_ALERT_FOR (default 5s), so a stopped replica is seen firing
// within seconds instead of the production minutes (docs/operations.md says so); nothing else in the
// rules changes.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';

export interface RunningPrometheus {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

export const PROMETHEUS_BINARY = '/usr/bin/prometheus';

interface RuleFile {
  groups: Array<{ name: string; rules: Array<Record<string, unknown>> }>;
}

/** The rules as the local fleet evaluates them: the same expressions, `for:` shortened. */
export function localRules(source: string, alertFor: string): string {
  const rules = parse(readFileSync(source, 'utf8')) as RuleFile;
  for (const group of rules.groups) for (const rule of group.rules) if (rule.alert && rule.for !== undefined) rule.for = alertFor;
  return stringify(rules);
}

export async function startPrometheus(options: { port: number; dir: string; rules: string; replicas: string[]; relays: string[]; alertFor?: string }): Promise<RunningPrometheus> {
  if (!existsSync(PROMETHEUS_BINARY)) throw new Error(`--observe needs Prometheus at ${PROMETHEUS_BINARY} (apt-get install prometheus)`);
  rmSync(options.dir, { recursive: true, force: true });
  mkdirSync(options.dir, { recursive: true });
  const alertFor = options.alertFor ?? process.env.FLEET_ALERT_FOR ?? '5s';
  writeFileSync(join(options.dir, 'alerts.yml'), localRules(options.rules, alertFor));
  writeFileSync(
    join(options.dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', scrape_timeout: '800ms', evaluation_interval: '1s' },
      rule_files: ['alerts.yml'],
      scrape_configs: [
        { job_name: 'trading-gateway', static_configs: [{ targets: options.replicas }] },
        { job_name: 'trading-gateway-relay', static_configs: [{ targets: options.relays }] },
      ],
    }),
  );
  const url = `http://127.0.0.1:${options.port}`;
  const proc = spawn(
    PROMETHEUS_BINARY,
    [
      `--config.file=${join(options.dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(options.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${options.port}`,
      '--log.level=warn',
    ],
    { cwd: options.dir, stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ready = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ready) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error('Prometheus did not become ready');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
