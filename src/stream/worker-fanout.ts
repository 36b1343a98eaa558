// The gateway-process side of the fan-out workers (WS_WORKERS > 0). See fanout-worker.ts for why.
//
// Order and gaplessness: every frame batch, every history and market notice, and every handed-over
// connection travel to a worker over the same IPC channel, in the order they happened here. A worker
// therefore registers a connection (and replays `since` from its own history, which holds every
// frame the gateway sent it) at exactly the point in the frame sequence where the in-process hub
// would have: no frame is lost or repeated across the hand-over.
//
// A worker started later (a replacement) first receives the gateway's copy of the replay history
// (its coverage, then its frames), so clients that reconnect to it with `since=` are replayed as
// they would have been by the worker that died, not told of a gap.
import { fork, type ChildProcess } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { Frame } from '../projections/types.js';
import { routingView, subscriptionToWire, type FromWorker, type RoutedFrame, type StreamFanout, type ToWorker } from './fanout.js';
import type { WorkerSettings } from './fanout-worker.js';
import { History } from './history.js';
import type { HubLogger } from './hub.js';
import type { StreamMetrics } from './metrics.js';
import { serializeFrame } from './serialize.js';
import type { Subscription } from './subscription.js';

export interface WorkerFanoutOptions extends WorkerSettings {
  workers: number;
  /** A started worker silent this long is killed and replaced (default 10 s). */
  silenceMs?: number;
  metrics: StreamMetrics;
  logger: HubLogger & { error(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

interface Slot {
  child: ChildProcess;
  /** Connections the worker last reported, plus those handed to it and not yet in a report. */
  clients: number;
  stopping: boolean;
  /** Resolved when the worker has loaded and listens (its 'ready' message). */
  ready: Promise<void>;
  markReady: () => void;
  /** Frame bytes sent to the worker and not yet written into its channel. */
  backlog: number;
  /** Runs while the backlog is above the bound: the worker is killed if it is still there at the end. */
  backlogTimer: NodeJS.Timeout | null;
  /**
   * Sockets handed over, oldest first, until the worker's reports show it took them. Node keeps the
   * gateway's copy of a socket open until the worker acknowledges it, and closes neither that one
   * nor those queued behind it if the worker dies first: these are closed on the worker's exit.
   */
  inTransit: Socket[];
  /** Hand-overs the worker's reports already covered (dropped from inTransit). */
  settled: number;
  /** Being killed (not reading, or silent): gets no new connections; its exit replaces it. */
  doomed: boolean;
  startedAt: number;
  /** When the worker last reported (it reports every 250 ms once started, whatever happens). */
  heardAt: number;
  /** It has started (sent 'ready'); only then does silence count against it. */
  up: boolean;
}

/** How long shutdown waits for the workers to send their 1001 closes. */
const CLOSE_WAIT_MS = 3_000;
/** A worker that dies sooner than this after its start is replaced after a growing delay (no fork loop). */
const QUICK_EXIT_MS = 5_000;
const MAX_RESPAWN_DELAY_MS = 30_000;
/**
 * A backlog above the bound this long means the worker is not reading (a healthy one drains a burst,
 * such as a 1 000-event backfill written in one go, in milliseconds); past 8 × the bound it is not
 * waited for.
 */
const BACKLOG_GRACE_MS = 2_000;
const BACKLOG_HARD_FACTOR = 8;
/** A worker that has not reported for this long (its event loop is stuck) is killed and replaced. */
const DEFAULT_SILENCE_MS = 10_000;
/** A worker that has not started (sent 'ready') this long after its spawn is killed and replaced. */
const START_TIMEOUT_MS = 30_000;
/** Before a worker has started it reads nothing: only this far past the bound is it given up on. */
const STARTING_HARD_FACTOR = 32;

export class WorkerFanout implements StreamFanout {
  readonly enabled = true;
  private readonly slots: Slot[] = [];
  private batch: Array<[RoutedFrame, string]> | null = null;
  private closed = false;
  /** Sent to a replacement worker: the last market list. */
  private known: string[] | null = null;
  /**
   * The replay history as every worker holds it (same capacity, same coverage), kept to seed a
   * replacement worker. It holds the JSON strings already made for IPC, not copies.
   */
  private readonly history: History<{ frame: RoutedFrame; json: string }>;
  private readonly entry: string;
  private readonly execArgv: string[];
  /** Delay before replacing a worker that died young; doubles while they keep dying young. */
  private respawnDelay = 0;
  /**
   * The bound of a worker's unread frames, the worker-level twin of the per-client 4008 bound: a
   * worker that stops reading its channel (stalled, starved of CPU) and stays past it for
   * BACKLOG_GRACE_MS, or goes past 8 × it, is killed and replaced, and its clients reconnect,
   * instead of the gateway buffering without limit.
   */
  private readonly backlogLimit: number;
  /** Finds workers that went silent or never started. */
  private readonly watchdog: NodeJS.Timeout;

  constructor(private readonly options: WorkerFanoutOptions) {
    // Under tsx (development, tests) the worker is the .ts source; built, it is the .js next to this file.
    const self = fileURLToPath(import.meta.url);
    const ts = self.endsWith('.ts');
    this.entry = self.replace(/worker-fanout\.(ts|js)$/, `fanout-worker.${ts ? 'ts' : 'js'}`);
    this.execArgv = ts && !process.execArgv.some((a) => a.includes('tsx')) ? [...process.execArgv, '--import', 'tsx'] : process.execArgv;
    this.backlogLimit = Math.max(1_048_576, 4 * options.bufferBytes);
    this.history = new History(options.historySize);
    for (let i = 0; i < options.workers; i++) this.slots.push(this.spawn());
    const silenceMs = options.silenceMs ?? DEFAULT_SILENCE_MS;
    const period = Math.min(1_000, silenceMs);
    let lastTick = performance.now();
    this.watchdog = setInterval(() => {
      const now = performance.now();
      // A late tick means this process was stalled: the workers' reports may be waiting unread in
      // their channels (timers run before I/O), so silence proves nothing this round.
      const late = now - lastTick > 2 * period;
      lastTick = now;
      for (const slot of this.slots) {
        if (late) slot.heardAt = now;
        else if (slot.up && now - slot.heardAt > silenceMs) this.doom(slot, { silentMs: Math.round(now - slot.heardAt) }, 'stream fan-out worker stopped reporting: replacing it');
        else if (!slot.up && now - slot.startedAt > START_TIMEOUT_MS) this.doom(slot, {}, 'stream fan-out worker did not start: replacing it');
      }
    }, period);
    this.watchdog.unref();
  }

  /** Kills a worker that is alive but not doing its work; its exit handler starts a replacement. */
  private doom(slot: Slot, details: object, msg: string): void {
    if (slot.doomed || slot.stopping || this.closed) return;
    slot.doomed = true;
    this.options.logger.error({ pid: slot.child.pid, ...details }, msg);
    slot.child.kill('SIGKILL');
  }

  get size(): number {
    let n = 0;
    for (const s of this.slots) n += s.clients;
    return n;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves once every current worker has started (connections handed over earlier simply wait in its channel). */
  async ready(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.ready));
  }

  /** The worker processes' pids (for benchmarks and operators' tooling). */
  get pids(): number[] {
    return this.slots.flatMap((s) => (s.child.pid === undefined ? [] : [s.child.pid]));
  }

  private spawn(): Slot {
    const settings: WorkerSettings = {
      bufferBytes: this.options.bufferBytes,
      pingMs: this.options.pingMs,
      historySize: this.options.historySize,
      logLevel: this.options.logLevel,
    };
    const child = fork(this.entry, [], {
      execArgv: this.execArgv,
      env: { ...process.env, GATEWAY_FANOUT_WORKER: JSON.stringify(settings) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    let markReady = () => {};
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const now = performance.now();
    const slot: Slot = {
      child, clients: 0, stopping: false, ready, markReady, backlog: 0, backlogTimer: null,
      inTransit: [], settled: 0, doomed: false, startedAt: now, heardAt: now, up: false,
    };
    child.on('message', (m: FromWorker) => this.onMessage(slot, m));
    child.on('exit', (code, signal) => {
      if (slot.backlogTimer) clearTimeout(slot.backlogTimer);
      closeInTransit(slot);
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      this.slots.splice(i, 1);
      this.updateClientGauge();
      if (slot.stopping || this.closed) return;
      // Its clients lost their sockets and will reconnect (and backfill with since=): replace it.
      const young = performance.now() - slot.startedAt < QUICK_EXIT_MS;
      this.respawnDelay = young ? Math.min(MAX_RESPAWN_DELAY_MS, Math.max(500, this.respawnDelay * 2)) : 0;
      this.options.logger.error({ pid: child.pid, code, signal, respawnInMs: this.respawnDelay }, 'stream fan-out worker exited; starting a replacement');
      const replace = () => {
        if (!this.closed) this.slots.push(this.spawn());
      };
      if (this.respawnDelay === 0) replace();
      else setTimeout(replace, this.respawnDelay).unref();
    });
    if (this.known !== null) this.post(slot, { t: 'markets', known: this.known });
    const covered = this.history.coveredAfter;
    if (covered !== null) this.post(slot, { t: 'covered', seq: covered });
    const held = [...this.history.after(Number.NEGATIVE_INFINITY)].map((e): [RoutedFrame, string] => [e.frame, e.json]);
    // Not counted in the backlog: it is bounded by WS_HISTORY_SIZE, may alone exceed the backlog
    // bound, and a worker that then stops reading is caught by the live frames that follow.
    if (held.length > 0) this.post(slot, { t: 'frames', frames: held });
    return slot;
  }

  private onMessage(slot: Slot, m: FromWorker): void {
    slot.heardAt = performance.now();
    if (m.t === 'ready') {
      slot.up = true;
      slot.markReady();
      this.judgeBacklog(slot); // what queued while it started is judged from now on
    }
    if (m.t !== 'stats') return;
    if (m.accepted > slot.settled) {
      slot.inTransit.splice(0, m.accepted - slot.settled);
      slot.settled = m.accepted;
    }
    // A report written before a hand-over arrived cannot count it: those still in transit are added.
    slot.clients = m.clients + slot.inTransit.length;
    const { metrics } = this.options;
    for (const [kind, n] of Object.entries(m.sent)) metrics.sent(kind, n);
    for (const [kind, n] of Object.entries(m.dropped)) metrics.framesDropped.inc({ kind }, n);
    if (m.slowCloses > 0) metrics.slowCloses.inc(m.slowCloses);
    this.updateClientGauge();
  }

  private updateClientGauge(): void {
    this.options.metrics.clients.set(this.size);
  }

  /**
   * false when the message could not be handed to the worker (it is gone or going); `onWritten`
   * runs once it has been written into the worker's channel.
   */
  private post(slot: Slot, m: ToWorker, handle?: Socket, onWritten?: () => void): boolean {
    if (!slot.child.connected) return false;
    try {
      slot.child.send(m, handle, {}, onWritten);
      return true;
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message }, 'stream fan-out worker: send failed');
      return false;
    }
  }

  private broadcast(m: ToWorker): void {
    for (const s of this.slots) this.post(s, m);
  }

  /** Frames to every worker, and into the history kept for replacements. */
  private broadcastFrames(frames: Array<[RoutedFrame, string]>): void {
    for (const [frame, json] of frames) this.history.push({ frame, json });
    const m: Extract<ToWorker, { t: 'frames' }> = { t: 'frames', frames };
    for (const slot of this.slots) this.postFrames(slot, m);
  }

  /** Frames to one worker, counting what it has not taken yet (see backlogLimit). */
  private postFrames(slot: Slot, m: Extract<ToWorker, { t: 'frames' }>): void {
    let bytes = 0;
    for (const [, json] of m.frames) bytes += json.length + 64;
    const sent = this.post(slot, m, undefined, () => {
      slot.backlog -= bytes;
      this.judgeBacklog(slot);
    });
    if (!sent) return;
    slot.backlog += bytes;
    this.judgeBacklog(slot);
  }

  /**
   * Frames posted in one synchronous run all count until this process yields, however fast the
   * worker reads: the bound is judged over a grace period (the backlog must stay above it
   * throughout), or at once far past it. Before the worker has started it reads nothing, so only
   * the far limit and the start timeout apply.
   */
  private judgeBacklog(slot: Slot): void {
    if (slot.doomed) return;
    if (slot.backlog <= this.backlogLimit) {
      if (slot.backlogTimer) clearTimeout(slot.backlogTimer);
      slot.backlogTimer = null;
      return;
    }
    if (slot.backlog > (slot.up ? BACKLOG_HARD_FACTOR : STARTING_HARD_FACTOR) * this.backlogLimit) {
      this.doom(slot, { backlog: slot.backlog }, 'stream fan-out worker is not reading its frames: replacing it');
      return;
    }
    if (!slot.up) return;
    slot.backlogTimer ??= setTimeout(() => {
      slot.backlogTimer = null;
      if (slot.backlog > this.backlogLimit) this.doom(slot, { backlog: slot.backlog }, 'stream fan-out worker is not reading its frames: replacing it');
    }, BACKLOG_GRACE_MS);
  }

  accept(req: IncomingMessage, socket: Duplex, head: Buffer, sub: Subscription): void {
    let slot: Slot | null = null;
    for (const s of this.slots) if (s.child.connected && !s.doomed && (slot === null || s.clients < slot.clients)) slot = s;
    if (this.closed || slot === null) {
      socket.destroy(); // shutting down, or no worker alive this instant: the client retries
      return;
    }
    const message: ToWorker = {
      t: 'client',
      sub: subscriptionToWire(sub),
      req: { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers },
      head: head.toString('base64'),
    };
    if (!this.post(slot, message, socket as Socket)) {
      socket.destroy();
      return;
    }
    slot.inTransit.push(socket as Socket);
    slot.clients++;
  }

  publish(frame: Frame): void {
    const entry: [RoutedFrame, string] = [routingView(frame), serializeFrame(frame)];
    if (this.batch) this.batch.push(entry);
    else this.broadcastFrames([entry]);
  }

  publishAll(frames: readonly Frame[]): void {
    for (const f of frames) this.publish(f);
  }

  /** One IPC message per worker for the whole batch: each worker writes it to a client in one write. */
  batched(fn: () => void): void {
    if (this.batch) return fn();
    const batch: Array<[RoutedFrame, string]> = [];
    this.batch = batch;
    try {
      fn();
    } finally {
      this.batch = null;
      if (batch.length > 0) this.broadcastFrames(batch);
    }
  }

  markCoveredAfter(seq: number): void {
    this.history.markCoveredAfter(seq);
    this.broadcast({ t: 'covered', seq });
  }

  resetHistory(seq: number): void {
    this.history.reset(seq);
    this.broadcast({ t: 'reset', seq });
  }

  setKnownMarkets(known: ReadonlySet<string> | null): void {
    this.known = known === null ? null : [...known];
    this.broadcast({ t: 'markets', known: this.known });
  }

  /** Every worker closes its clients with 1001 and answers once their sockets are closed. */
  async closeAll(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(
      this.slots.map(
        (slot) =>
          new Promise<void>((resolve) => {
            slot.stopping = true;
            // A worker that does not answer is stuck: killed, so the HTTP server (which asks it
            // about the sockets it was handed) can close.
            const timer = setTimeout(() => {
              slot.child.kill('SIGKILL');
              done();
            }, CLOSE_WAIT_MS);
            function done(): void {
              clearTimeout(timer);
              slot.child.off('message', onMessage);
              slot.child.off('exit', done);
              resolve();
            }
            const onMessage = (m: FromWorker) => m.t === 'closed' && done();
            slot.child.on('message', onMessage);
            slot.child.once('exit', done);
            this.post(slot, { t: 'close' });
          }),
      ),
    );
  }

  /** Ends the worker processes (their clients are already closed). */
  async stop(): Promise<void> {
    this.closed = true;
    clearInterval(this.watchdog);
    await Promise.all(
      this.slots.map(
        (slot) =>
          new Promise<void>((resolve) => {
            slot.stopping = true;
            if (slot.child.exitCode !== null || slot.child.signalCode !== null) return resolve();
            // The worker ignores SIGTERM (see fanout-worker.ts) and exits when its channel closes.
            const force = setTimeout(() => slot.child.kill('SIGKILL'), CLOSE_WAIT_MS);
            slot.child.once('exit', () => {
              clearTimeout(force);
              resolve();
            });
            if (slot.child.connected) slot.child.disconnect();
            else slot.child.kill('SIGKILL');
          }),
      ),
    );
  }
}

/**
 * Closes the sockets a dead worker never took. Those still queued in Node (it sends one handle at
 * a time, each after the previous one's acknowledgement) are ours to destroy. The one that was on
 * its way has already been detached from its Socket and is held, until an acknowledgement that
 * will never come, in the ChildProcess's private `_pendingMessage`: closing it there is the only
 * way to end that connection (checked on Node 20; without the field this does nothing more).
 */
function closeInTransit(slot: Slot): void {
  // Only sockets Node has not detached yet: destroying a detached one would close nothing, yet
  // count a connection off the HTTP server a second time.
  for (const socket of slot.inTransit) if ((socket as unknown as { _handle: unknown })._handle) socket.destroy();
  slot.inTransit = [];
  const pending = (slot.child as unknown as { _pendingMessage?: { handle?: { close?: () => void } } | null })._pendingMessage;
  try {
    pending?.handle?.close?.();
  } catch {
    /* already closed */
  }
}
