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
import { proxyIdleTimeoutMs, renderNginxConfig, REPLICA_KEEP_ALIVE_MS } from '../../../deploy/nginx.js';

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

  it('the gateway: readiness on /readyz/replica, liveness on /healthz, a Service and a PodDisruptionBudget that select its pods', () => {
    const gw = find('Deployment', 'trading-gateway');
    const container = gw.spec.template.spec.containers[0];
    expect(container.readinessProbe.httpGet.path).toBe('/readyz/replica');
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

  it('the gateway behind the ingress: the forwarded client trusted, the per-peer TCP cap off', () => {
    const config = find('ConfigMap', 'trading-gateway').data!;
    expect(config.TRUST_PROXY).toMatch(/\d+\.\d+\.\d+\.\d+\/\d+/);
    expect(config.HTTP_MAX_CONNECTIONS_PER_IP).toBe('0');
    expect(config.NODE_ENV).toBe('production');
  });

  it('the ingress closes an idle connection before the replica does: the replica keeps it the shipped 75 s, 1.25x the usual 60 s of an ingress', () => {
    const config = find('ConfigMap', 'trading-gateway').data!;
    expect(Number(config.HTTP_KEEP_ALIVE_TIMEOUT_MS)).toBe(REPLICA_KEEP_ALIVE_MS);
    expect(proxyIdleTimeoutMs(REPLICA_KEEP_ALIVE_MS)).toBeGreaterThanOrEqual(60_000);
  });

  it('the gateway drains before SIGTERM: a preStop delay longer than the readiness probe takes to notice, within the grace period', () => {
    const pod = find('Deployment', 'trading-gateway').spec.template.spec;
    const container = pod.containers[0];
    const [node, flag, script] = container.lifecycle.preStop.exec.command as string[];
    expect([node, flag]).toEqual(['node', '-e']);
    const delayS = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(script!)![1]) / 1000;
    const probe = container.readinessProbe;
    expect(delayS).toBeGreaterThan(probe.periodSeconds * probe.failureThreshold);
    // The gateway's own shutdown takes at most 10 s (src/main.ts) after the delay.
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(delayS + 10);
  });

  it('the gateway spreads its replicas over nodes and sizes memory from the measured cost per client', () => {
    const pod = find('Deployment', 'trading-gateway').spec.template.spec;
    const labels = find('Deployment', 'trading-gateway').spec.template.metadata.labels;
    const byHost = pod.topologySpreadConstraints.find((c: { topologyKey: string }) => c.topologyKey === 'kubernetes.io/hostname');
    expect(byHost).toMatchObject({ maxSkew: 1, labelSelector: { matchLabels: labels } });
    const clients = Number(find('ConfigMap', 'trading-gateway').data!.WS_MAX_CONNECTIONS);
    const mib = (q: string) => Number(/^(\d+)Mi$/.exec(q)![1]) * 1_048_576;
    const { requests, limits } = pod.containers[0].resources;
    // Base ~250 MB and 17 KB per idle client, the worst measured.
    expect(mib(requests.memory)).toBeGreaterThanOrEqual(250e6 + clients * 17_000);
    expect(mib(limits.memory)).toBeGreaterThanOrEqual(862e6);
  });

  it('every pod meets the restricted Pod Security Standard, and mounts no service-account token', () => {
    for (const d of manifests.filter((m) => m.kind === 'Deployment')) {
      expect(restrictedViolations(d.spec.template.spec), d.metadata.name).toEqual([]);
      expect(d.spec.template.spec.automountServiceAccountToken, d.metadata.name).toBe(false);
    }
  });

  it('the restricted check catches each rule broken', () => {
    const good = find('Deployment', 'trading-gateway').spec.template.spec;
    const broken = (change: (pod: any) => void) => {
      const pod = structuredClone(good);
      change(pod);
      return restrictedViolations(pod);
    };
    expect(broken((p) => delete p.securityContext.seccompProfile)).toEqual(['gateway: seccompProfile must be RuntimeDefault or Localhost']);
    expect(broken((p) => (p.securityContext.seccompProfile.type = 'Unconfined'))).toEqual(['gateway: seccompProfile must be RuntimeDefault or Localhost']);
    expect(broken((p) => (p.containers[0].securityContext.allowPrivilegeEscalation = true))).toEqual(['gateway: allowPrivilegeEscalation must be false']);
    expect(broken((p) => delete p.securityContext.runAsNonRoot)).toEqual(['gateway: runAsNonRoot must be true']);
    expect(broken((p) => (p.containers[0].securityContext.runAsUser = 0))).toEqual(['gateway: runAsUser must not be 0']);
    expect(broken((p) => (p.containers[0].securityContext.capabilities = { drop: ['NET_RAW'] }))).toEqual(['gateway: capabilities must drop ALL']);
    expect(broken((p) => (p.containers[0].securityContext.capabilities.add = ['SYS_ADMIN']))).toEqual(['gateway: capabilities may add NET_BIND_SERVICE only']);
    expect(broken((p) => (p.containers[0].securityContext.privileged = true))).toEqual(['gateway: privileged must be false']);
    expect(broken((p) => (p.hostNetwork = true))).toEqual(['pod: hostNetwork, hostPID and hostIPC must be off']);
    expect(broken((p) => (p.volumes = [{ name: 'h', hostPath: { path: '/' } }]))).toEqual(['pod: volume h is a hostPath (restricted allows configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret)']);
    expect(broken((p) => (p.containers[0].ports[0].hostPort = 80))).toEqual(['gateway: hostPort must be unset']);
    expect(broken((p) => (p.securityContext.sysctls = [{ name: 'kernel.shm_rmid_forced', value: '1' }, { name: 'net.core.somaxconn', value: '1024' }]))).toEqual(['pod: sysctl net.core.somaxconn is not a safe sysctl']);
  });

  it('names no image that was never built: the image is a placeholder for the operator', () => {
    const images = manifests.filter((m) => m.kind === 'Deployment').flatMap((m) => m.spec.template.spec.containers.map((c: { image: string }) => c.image));
    expect(new Set(images)).toEqual(new Set(['IMAGE']));
  });
});

/**
 * The restricted Pod Security Standard (kubernetes.io/docs/concepts/security/pod-security-standards,
 * the baseline rules included), as its admission controller checks a pod spec: what it would refuse,
 * one line each. Unset fields count as the defaults the standard assumes (a container may inherit
 * runAsNonRoot, runAsUser and seccompProfile from the pod's securityContext).
 */
const RESTRICTED_VOLUMES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
const SAFE_SYSCTLS = new Set(['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes']);
function restrictedViolations(pod: any): string[] {
  const out: string[] = [];
  const podSc = pod.securityContext ?? {};
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) out.push('pod: hostNetwork, hostPID and hostIPC must be off');
  for (const v of pod.volumes ?? []) {
    const type = Object.keys(v).find((k) => k !== 'name')!;
    if (!RESTRICTED_VOLUMES.includes(type)) out.push(`pod: volume ${v.name} is a ${type} (restricted allows ${RESTRICTED_VOLUMES.join(', ')})`);
  }
  for (const s of podSc.sysctls ?? []) if (!SAFE_SYSCTLS.has(s.name)) out.push(`pod: sysctl ${s.name} is not a safe sysctl`);
  if (podSc.seLinuxOptions?.type && !['container_t', 'container_init_t', 'container_kvm_t'].includes(podSc.seLinuxOptions.type)) out.push('pod: seLinuxOptions.type not allowed');
  for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
    const sc = c.securityContext ?? {};
    const name = c.name;
    if (sc.privileged) out.push(`${name}: privileged must be false`);
    if (sc.windowsOptions?.hostProcess) out.push(`${name}: hostProcess must be false`);
    if (sc.procMount && sc.procMount !== 'Default') out.push(`${name}: procMount must be Default`);
    if (sc.appArmorProfile?.type === 'Unconfined') out.push(`${name}: AppArmor must not be Unconfined`);
    for (const p of c.ports ?? []) if (p.hostPort) out.push(`${name}: hostPort must be unset`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${name}: allowPrivilegeEscalation must be false`);
    if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) out.push(`${name}: runAsNonRoot must be true`);
    if ((sc.runAsUser ?? podSc.runAsUser) === 0) out.push(`${name}: runAsUser must not be 0`);
    const seccomp = sc.seccompProfile?.type ?? podSc.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${name}: seccompProfile must be RuntimeDefault or Localhost`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) out.push(`${name}: capabilities must drop ALL`);
    if ((sc.capabilities?.add ?? []).some((cap: string) => cap !== 'NET_BIND_SERVICE')) out.push(`${name}: capabilities may add NET_BIND_SERVICE only`);
  }
  return out;
}

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

  it('hardened: no capabilities, a read-only system, filtered system calls (systemd-analyze security rates the exposure at most 2.0), a stated open-file limit', async () => {
    const { dir, units } = installed();
    try {
      for (const u of units) {
        const text = readFileSync(u, 'utf8');
        for (const directive of ['NoNewPrivileges=yes', 'CapabilityBoundingSet=', 'ProtectSystem=strict', 'SystemCallFilter=@system-service', 'RestrictNamespaces=yes']) {
          expect(text, `${u}: ${directive}`).toMatch(new RegExp(`^${directive}$`, 'm'));
        }
        expect(text).toMatch(/^LimitNOFILE=\d+$/m);
        const { stdout } = await run(analyze, ['security', '--offline=true', u], { cwd: dir });
        const exposure = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(stdout)![1]);
        expect(exposure, u).toBeLessThanOrEqual(2);
      }
      // The replica's limit leaves room for its stream clients (WS_MAX_CONNECTIONS, 20 000 by default).
      const replica = readFileSync(units.find((u) => u.includes('trading-gateway@'))!, 'utf8');
      expect(Number(/^LimitNOFILE=(\d+)$/m.exec(replica)![1])).toBeGreaterThan(20_000 * 1.25);
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

describe('idle connections closed by the proxy first (deploy/nginx, deploy/systemd)', () => {
  it('the shipped replicas keep an idle connection 75 s; nginx rendered for them closes it at 60 s', () => {
    const unit = readFileSync(join(SYSTEMD, 'trading-gateway@.service'), 'utf8');
    expect(unit).toMatch(new RegExp(`^Environment=HTTP_KEEP_ALIVE_TIMEOUT_MS=${REPLICA_KEEP_ALIVE_MS}$`, 'm'));
    const conf = renderNginxConfig({ listen: '127.0.0.1:1', upstreams: ['127.0.0.1:2'], prefix: '/tmp/x', replicaKeepAliveMs: REPLICA_KEEP_ALIVE_MS });
    expect(conf).toMatch(/upstream gateway \{[^}]*keepalive_timeout 60000ms;/);
    expect(proxyIdleTimeoutMs(2_000)).toBe(1_600);
  });
});
