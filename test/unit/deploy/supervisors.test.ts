// What a real supervisor runs, checked offline: every Kubernetes manifest of deploy/kubernetes/
// against the Kubernetes API schemas (kubernetes-models, no cluster, no network), with the probes
// and selectors the operations guide promises; and the systemd units of deploy/systemd/ by
// `systemd-analyze verify` (instances of the templates, the install path pointed at this checkout).
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Service } from 'kubernetes-models/v1/Service';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const K8S = join(ROOT, 'deploy', 'kubernetes');
const SYSTEMD = join(ROOT, 'deploy', 'systemd');

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; spec?: any; data?: Record<string, string> };
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'apps/v1 Deployment': Deployment,
  'v1 Service': Service,
  'v1 ConfigMap': ConfigMap,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
};

const manifests: Manifest[] = readdirSync(K8S)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((f) => parseAllDocuments(readFileSync(join(K8S, f), 'utf8')).map((d) => d.toJS() as Manifest));
const find = (kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name)!;

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  it('every document is a known kind and valid against the Kubernetes schema', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(6);
    for (const m of manifests) {
      const Model = MODELS[`${m.apiVersion} ${m.kind}`];
      expect(Model, `${m.apiVersion} ${m.kind}`).toBeDefined();
      expect(() => new Model!(m).validate(), `${m.kind}/${m.metadata.name}`).not.toThrow();
    }
  });

  it('the schema check catches a wrong manifest', () => {
    const broken = structuredClone(find('Deployment', 'trading-gateway'));
    broken.spec.replicas = 'three';
    expect(() => new Deployment(broken).validate()).toThrow();
    const noSelector = structuredClone(find('Deployment', 'trading-gateway'));
    delete noSelector.spec.selector;
    expect(() => new Deployment(noSelector).validate()).toThrow();
  });

  it('the gateway: readiness on /readyz, liveness on /healthz, a Service and a PodDisruptionBudget that select its pods', () => {
    const gw = find('Deployment', 'trading-gateway');
    const container = gw.spec.template.spec.containers[0];
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(gw.spec.replicas).toBeGreaterThanOrEqual(2);
    const labels = gw.spec.template.metadata.labels;
    expect(gw.spec.selector.matchLabels).toEqual(labels);
    expect(find('Service', 'trading-gateway').spec.selector).toEqual(labels);
    expect(find('PodDisruptionBudget', 'trading-gateway').spec.selector.matchLabels).toEqual(labels);
  });

  it('the relay: two pods (active and standby) with probes and a PodDisruptionBudget', () => {
    const relay = find('Deployment', 'trading-gateway-relay');
    expect(relay.spec.replicas).toBe(2);
    const container = relay.spec.template.spec.containers[0];
    expect(container.command).toEqual(['node', 'dist/src/relay/main.js']);
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(container.livenessProbe.httpGet.path).toBe('/healthz');
    expect(find('PodDisruptionBudget', 'trading-gateway-relay').spec.selector.matchLabels).toEqual(relay.spec.template.metadata.labels);
  });

  it('names no image that was never built: the image is a placeholder for the operator', () => {
    const images = manifests.filter((m) => m.kind === 'Deployment').flatMap((m) => m.spec.template.spec.containers.map((c: { image: string }) => c.image));
    expect(new Set(images)).toEqual(new Set(['IMAGE']));
  });
});

const analyze = '/usr/bin/systemd-analyze';
const hasAnalyze = existsSync(analyze);
if (!hasAnalyze && process.env.CI) throw new Error('systemd-analyze is missing in CI');
if (!hasAnalyze) console.warn('[deploy] systemd-analyze not installed: unit checks skipped');

describe.skipIf(!hasAnalyze)('systemd units (deploy/systemd)', () => {
  /** The units as installed on a host whose /opt/trading-gateway is this checkout, one instance each. */
  function installed(mutate: (text: string) => string = (t) => t): { dir: string; units: string[] } {
    const dir = mkdtempSync(join(tmpdir(), 'units-'));
    writeFileSync(join(dir, 'gateway.env'), 'ENGINE_BASE_URL=http://127.0.0.1:8080\n');
    const units: string[] = [];
    for (const file of readdirSync(SYSTEMD).filter((f) => f.endsWith('@.service'))) {
      const text = readFileSync(join(SYSTEMD, file), 'utf8').replaceAll('/opt/trading-gateway', ROOT).replace(/^EnvironmentFile=.*$/m, `EnvironmentFile=${join(dir, 'gateway.env')}`);
      writeFileSync(join(dir, file), mutate(text));
      const instance = file.replace('@.service', '@4001.service');
      copyFileSync(join(dir, file), join(dir, instance));
      units.push(join(dir, instance));
    }
    return { dir, units };
  }

  it('systemd-analyze verify passes for the replica and relay templates, with restart on failure', async () => {
    const { dir, units } = installed();
    try {
      expect(units.map((u) => u.split('/').pop())).toEqual(['trading-gateway-relay@4001.service', 'trading-gateway@4001.service']);
      const { stderr } = await run(analyze, ['verify', ...units], { cwd: dir });
      expect(stderr).toBe('');
      for (const u of units) expect(readFileSync(u, 'utf8')).toMatch(/^Restart=on-failure$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('and fails for a unit whose program does not exist (the check can fail)', async () => {
    const { dir, units } = installed((t) => t.replace(/^ExecStart=\S+/m, 'ExecStart=/nonexistent/node'));
    try {
      await expect(run(analyze, ['verify', ...units], { cwd: dir })).rejects.toThrow(/not executable/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
