// Prometheus metrics. One registry per app instance (tests build many apps in one process);
// other modules add their own metrics to `registry`.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly engineMaxSeq: Gauge;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.engineMaxSeq = new Gauge({
      name: 'bff_engine_max_seq',
      help: 'Highest engine event seq the gateway has seen on the admin SSE stream',
      registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'bff_http_request_duration_seconds',
      help: 'HTTP request duration by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [this.registry],
    });
    this.httpRequests = new Counter({
      name: 'bff_http_requests_total',
      help: 'HTTP requests by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
  }
}

/** A counter whose total is kept elsewhere (`total`, monotonic): each scrape adds what it grew by since the last one. */
export function scrapedCounter(registry: Registry, name: string, help: string, total: () => number): void {
  let reported = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = total();
      this.inc(now - reported);
      reported = now;
    },
  });
}
