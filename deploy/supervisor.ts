// Restart-on-failure for the members of `npm run fleet` that a real deployment runs several of
// (gateway replicas, relays), as systemd's `Restart=on-failure` with `RestartSec` or a Kubernetes
// Deployment's pod restarts do: a member that exits on its own is started again on the same port
// after a backoff that doubles on each quick failure (0.5 s, 1 s, 2 s … 10 s) and starts over once
// the member stayed up 30 s. The fleet keeps serving meanwhile (nginx routes around the gap; the
// standby relay takes over). A member stopped by the fleet itself is not restarted.
import { startChild, type Child } from '../sandbox/stack/children.js';

export interface SupervisedOptions {
  name: string;
  entry: string;
  env: Record<string, string>;
  /** Flags for node itself (the gateway's: sandbox/stack/gateway-node-flags.ts). */
  nodeFlags?: readonly string[];
  cwd: string;
  say: (msg: string) => void;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Up this long, the next failure restarts after the base delay again. */
  stableMs?: number;
}

export class Supervised {
  private child: Child;
  private stopped = false;
  private failures = 0;
  private startedAt = Date.now();
  private timer: NodeJS.Timeout | null = null;
  /** How many times the member was started again after exiting on its own. */
  restarts = 0;

  constructor(private readonly options: SupervisedOptions) {
    this.child = this.start();
  }

  get name(): string {
    return this.options.name;
  }

  /** The member's current process id (changes on each restart). */
  get pid(): number | undefined {
    return this.child.proc.pid;
  }

  private start(): Child {
    this.startedAt = Date.now();
    return startChild(this.options.name, this.options.entry, this.options.env, this.options.cwd, (name, how) => this.exited(name, how), this.options.nodeFlags);
  }

  private exited(name: string, how: string): void {
    if (this.stopped) return;
    const { baseDelayMs = 500, maxDelayMs = 10_000, stableMs = 30_000 } = this.options;
    if (Date.now() - this.startedAt >= stableMs) this.failures = 0;
    const delay = Math.min(maxDelayMs, baseDelayMs * 2 ** this.failures);
    this.failures++;
    this.options.say(`${name} exited unexpectedly (${how}); restarting in ${(delay / 1000).toFixed(1)} s`);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.stopped) return;
      this.restarts++;
      this.child = this.start();
      this.options.say(`${name} restarted (pid ${this.child.proc.pid}, restart ${this.restarts})`);
    }, delay);
  }

  async stop(graceMs?: number): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.child.stop(graceMs);
  }
}
