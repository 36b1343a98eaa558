// A process in a network namespace of its own, joined to this one by two veth pairs: one for NATS
// (the link a test sets down to cut the process off from the cluster, while everything else still
// flows) and one for the rest (its clients, the engine). This kernel has no netem, so a partition is
// a link set down: packets vanish, no reset, as when a switch port dies. Needs root (`ip netns`);
// every namespace and link is removed by `cleanup()`, and at process exit if a test failed first.
//
// The addresses are in 10.250.0.0/16, inside these namespaces only: what leaves the namespace goes
// to a TCP proxy of this process (`proxy()`), which forwards to a loopback port.
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { randomInt } from 'node:crypto';

export function netnsAvailable(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const ip = (...args: string[]): void => {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
};

const live = new Set<IsolatedHost>();
process.once('exit', () => {
  for (const h of live) h.cleanupSync();
});

export class IsolatedHost {
  readonly ns: string;
  /** Root-side link ends (NATS, rest). */
  private readonly natsLink: string;
  private readonly restLink: string;
  /** This namespace's side of the NATS link, and the address the namespace reaches NATS at. */
  readonly natsGateway: string;
  /** Where clients reach the process in the namespace, and where it reaches the rest (proxies). */
  readonly address: string;
  readonly restGateway: string;
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<Socket>();

  constructor(tag: string) {
    const id = `${tag}${randomInt(0, 0xffff).toString(16)}`.slice(0, 9);
    const octet = randomInt(1, 250);
    this.ns = `gw${id}`;
    this.natsLink = `vn${id}`;
    this.restLink = `vr${id}`;
    this.natsGateway = `10.250.${octet}.1`;
    this.restGateway = `10.250.${octet}.5`;
    this.address = `10.250.${octet}.6`;
    live.add(this);
    ip('netns', 'add', this.ns);
    ip('-n', this.ns, 'link', 'set', 'lo', 'up');
    for (const [link, root, inner] of [
      [this.natsLink, this.natsGateway, `10.250.${octet}.2`],
      [this.restLink, this.restGateway, this.address],
    ] as const) {
      ip('link', 'add', link, 'type', 'veth', 'peer', 'name', `${link}p`);
      ip('link', 'set', `${link}p`, 'netns', this.ns);
      ip('addr', 'add', `${root}/30`, 'dev', link);
      ip('link', 'set', link, 'up');
      ip('-n', this.ns, 'addr', 'add', `${inner}/30`, 'dev', `${link}p`);
      ip('-n', this.ns, 'link', 'set', `${link}p`, 'up');
    }
  }

  /** A TCP proxy on `host` (one of this host's gateways) forwarding to 127.0.0.1:`port`; resolves to its port. */
  async proxy(host: string, port: number): Promise<number> {
    const server = createServer((inbound) => {
      const outbound = tcpConnect({ host: '127.0.0.1', port });
      for (const s of [inbound, outbound]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          inbound.destroy();
          outbound.destroy();
        });
      }
      inbound.pipe(outbound);
      outbound.pipe(inbound);
    });
    this.servers.push(server);
    await new Promise<void>((r) => server.listen(0, host, r));
    return (server.address() as { port: number }).port;
  }

  /** Runs a command inside the namespace. */
  spawn(command: string, args: string[], options: SpawnOptions): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.ns, command, ...args], options);
  }

  /** The NATS link down (a partition) or up again. */
  natsLinkUp(up: boolean): void {
    ip('link', 'set', this.natsLink, up ? 'up' : 'down');
  }

  cleanupSync(): void {
    for (const link of [this.natsLink, this.restLink]) {
      try {
        ip('link', 'del', link);
      } catch {
        /* gone with the namespace */
      }
    }
    try {
      ip('netns', 'del', this.ns);
    } catch {
      /* already removed */
    }
    live.delete(this);
  }

  async cleanup(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await Promise.all(this.servers.map((s) => new Promise((r) => s.close(r))));
    this.cleanupSync();
  }
}
