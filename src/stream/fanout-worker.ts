// A fan-out worker process (WS_WORKERS > 0): holds a share of the /v1/stream connections and
// writes to them, so the writes (one syscall per client per batch, the cost that grows with the
// number of clients) use more than one core. The gateway process keeps the one SSE connection, the
// projections, the upgrade checks and the JSON of each frame; it hands each authorised socket over
// with its subscription, and sends every batch of frames (routing view + JSON) to every worker.
// Each worker runs the same StreamHub as the in-process mode: filters, bounded per-client queue
// (4008), pings, replay history, 1001 on shutdown.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import pino from 'pino';
import type { Frame } from '../projections/types.js';
import { subscriptionFromWire, type FromWorker, type ToWorker } from './fanout.js';
import { StreamHub, type HubMetrics } from './hub.js';

export interface WorkerSettings {
  bufferBytes: number;
  pingMs: number;
  historySize: number;
  logLevel: string;
}

/** How long shutdown lets clients answer the 1001 close before their sockets are cut. */
const CLOSE_GRACE_MS = 1_000;

/** Counts since the last report, sent to the gateway process, which owns the Prometheus registry. */
class DeltaMetrics implements HubMetrics {
  count = 0;
  accepted = 0;
  sentByKind: Record<string, number> = {};
  droppedByKind: Record<string, number> = {};
  slow = 0;
  changed = false;
  /** Told when the number of connections changes: the gateway's connection limit needs it promptly. */
  onClients: () => void = () => {};
  readonly clients = {
    set: (n: number) => {
      this.count = n;
      this.changed = true;
      this.onClients();
    },
  };
  readonly slowCloses = { inc: () => ((this.slow += 1), (this.changed = true)) };
  readonly framesDropped = {
    inc: ({ kind }: { kind: string }) => ((this.droppedByKind[kind] = (this.droppedByKind[kind] ?? 0) + 1), (this.changed = true)),
  };
  sent(kind: string, n: number): void {
    if (n === 0) return;
    this.sentByKind[kind] = (this.sentByKind[kind] ?? 0) + n;
    this.changed = true;
  }
  take(): FromWorker {
    const r: FromWorker = { t: 'stats', clients: this.count, accepted: this.accepted, sent: this.sentByKind, dropped: this.droppedByKind, slowCloses: this.slow };
    this.sentByKind = {};
    this.droppedByKind = {};
    this.slow = 0;
    this.changed = false;
    return r;
  }
}

const STATS_MS = 250;

function run(settings: WorkerSettings): void {
  // The gateway process may be gone between a check and a write (it was killed): a failed report is
  // dropped, and the 'disconnect' handler below ends this process.
  const send = (m: FromWorker) => {
    if (process.connected) process.send?.(m, undefined, {}, () => {});
  };
  const logger = pino({ level: settings.logLevel, base: { worker: process.pid } });
  const metrics = new DeltaMetrics();
  const hub = new StreamHub({ enabled: true, bufferBytes: settings.bufferBytes, pingMs: settings.pingMs, historySize: settings.historySize, metrics, logger });
  const report = () => {
    if (metrics.changed) send(metrics.take());
  };
  // Every STATS_MS whether or not anything changed: the gateway also takes it as a heartbeat.
  setInterval(() => send(metrics.take()), STATS_MS);
  let soon = false;
  metrics.onClients = () => {
    if (soon) return;
    soon = true;
    setImmediate(() => {
      soon = false;
      report();
    });
  };

  // The sockets handed over and still open: shutdown answers only once they are all closed.
  const sockets = new Set<Socket>();
  process.on('message', (m: ToWorker, handle?: Socket) => {
    switch (m.t) {
      case 'client': {
        metrics.accepted++;
        metrics.changed = true;
        if (!handle) {
          // The socket closed before it could be sent: nothing to register, but the count must move.
          report();
          return;
        }
        sockets.add(handle);
        handle.on('close', () => sockets.delete(handle));
        handle.on('error', () => handle.destroy());
        const req = { method: m.req.method, url: m.req.url, headers: m.req.headers } as IncomingMessage;
        hub.accept(req, handle, Buffer.from(m.head, 'base64'), subscriptionFromWire(m.sub));
        return;
      }
      case 'frames':
        hub.batched(() => {
          for (const [frame, json] of m.frames) hub.publishSerialized(frame as Frame, Buffer.from(json));
        });
        return;
      case 'covered':
        hub.markCoveredAfter(m.seq);
        return;
      case 'reset':
        hub.resetHistory(m.seq);
        return;
      case 'markets':
        hub.setKnownMarkets(m.known === null ? null : new Set(m.known));
        return;
      case 'close':
        void hub.closeAll().then(async () => {
          for (let waited = 0; sockets.size > 0 && waited < CLOSE_GRACE_MS; waited += 20) await new Promise((r) => setTimeout(r, 20));
          for (const s of sockets) s.destroy(); // a client that did not answer the close in time
          report();
          send({ t: 'closed' });
        });
        return;
    }
  });
  // The gateway process is gone (crashed or stopped): so are this worker's reasons to live.
  process.on('disconnect', () => process.exit(0));
  // A Ctrl-C or a service manager signals the whole process group; the gateway process decides when
  // this worker stops (`close`, then stop() or the IPC disconnect), so that its clients get 1001.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => {});
  send({ t: 'ready' });
}

run(JSON.parse(process.env.GATEWAY_FANOUT_WORKER ?? 'null') as WorkerSettings);
