// Stream and SSE metrics, registered on the app's own registry (one per app; tests build many).
import { Counter, Gauge, type Registry } from 'prom-client';

const byRegistry = new WeakMap<Registry, StreamMetrics>();

export class StreamMetrics {
  /** One set per registry (prom-client refuses a second registration of a name). */
  static for(registry: Registry): StreamMetrics {
    let m = byRegistry.get(registry);
    if (!m) byRegistry.set(registry, (m = new StreamMetrics(registry)));
    return m;
  }

  readonly clients: Gauge;
  /** The stream's connection limit as applied (WS_MAX_CONNECTIONS lowered by the file limit). */
  readonly connectionLimit: Gauge;
  readonly framesSent: Counter<'kind'>;
  readonly framesDropped: Counter<'kind'>;
  readonly slowCloses: Counter;
  readonly rejected: Counter<'status'>;
  readonly floodCloses: Counter;
  readonly deflateConnections: Gauge;
  /** Client messages answered, by op (`invalid` when none could be read) and answer kind. */
  readonly clientMessages: Counter<'op' | 'answer'>;
  readonly sseReconnects: Counter;
  readonly sseLag: Gauge;
  readonly sseEvents: Counter;
  readonly sseOversized: Counter;
  private readonly sentByKind = new Map<string, Counter.Internal>();

  private constructor(registry: Registry) {
    const registers = [registry];
    this.clients = new Gauge({ name: 'bff_ws_clients', help: 'Open /v1/stream connections', registers });
    this.connectionLimit = new Gauge({
      name: 'bff_ws_connection_limit',
      help: "Most /v1/stream connections accepted at once: WS_MAX_CONNECTIONS, or the process's open-file limit less FD_HEADROOM when lower",
      registers,
    });
    this.framesSent = new Counter({ name: 'bff_ws_frames_sent_total', help: 'Frames written to stream clients, by kind', labelNames: ['kind'], registers });
    this.framesDropped = new Counter({
      name: 'bff_ws_frames_dropped_total',
      help: 'Frames not delivered because the client was closed as a slow consumer, by kind',
      labelNames: ['kind'],
      registers,
    });
    this.slowCloses = new Counter({ name: 'bff_ws_slow_client_closes_total', help: 'Clients closed with 4008 (buffer over WS_CLIENT_BUFFER_BYTES)', registers });
    this.deflateConnections = new Gauge({ name: 'bff_ws_deflate_connections', help: 'Open stream connections with permessage-deflate negotiated (compress=deflate)', registers });
    this.floodCloses = new Counter({ name: 'bff_ws_flood_closes_total', help: 'Clients closed with 1008 for sending more messages than WS_CLIENT_MESSAGES_PER_S allows', registers });
    this.clientMessages = new Counter({
      name: 'bff_ws_client_messages_total',
      help: 'Messages of stream clients answered, by op (invalid when none could be read) and answer (ack, answer, or the error code)',
      labelNames: ['op', 'answer'],
      registers,
    });
    this.rejected = new Counter({ name: 'bff_ws_upgrades_rejected_total', help: 'Refused /v1/stream upgrades, by HTTP status', labelNames: ['status'], registers });
    this.sseReconnects = new Counter({ name: 'bff_sse_reconnects_total', help: 'Reconnections of the engine admin SSE stream', registers });
    this.sseLag = new Gauge({ name: 'bff_sse_lag_seconds', help: 'Gateway clock minus the ts of the last engine event received; with NATS_URL, while the replica is behind the engine, at least bff_stream_behind_seconds (never frozen during a stall)', registers });
    this.sseEvents = new Counter({ name: 'bff_sse_events_total', help: 'Engine events accepted from the admin SSE stream (after de-duplication)', registers });
    this.sseOversized = new Counter({ name: 'bff_sse_oversized_total', help: 'Engine SSE connections dropped for a line or event longer than SSE_MAX_EVENT_BYTES', registers });
  }

  /** Counts n deliveries of one frame; label children are cached (this runs once per frame, not per client). */
  sent(kind: string, n: number): void {
    if (n === 0) return;
    let child = this.sentByKind.get(kind);
    if (!child) {
      child = this.framesSent.labels(kind);
      this.sentByKind.set(kind, child);
    }
    child.inc(n);
  }
}
