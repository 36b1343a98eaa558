// Engine round-trip time of proxied calls, so an operator can tell gateway overhead from engine time.
import { Counter, Histogram } from 'prom-client';
import type { Metrics } from '../../metrics.js';

/**
 * What one route records. The histogram child of each (route, outcome) is made once, so a call
 * costs one `observe` (no `startTimer` closures, no hashing of the label set).
 */
export interface RouteTimer {
  observe(outcome: string, seconds: number): void;
}

export interface ProxyMetrics {
  duration: Histogram<'route' | 'outcome'>;
  /** Engine calls saved by shared reads (requests answered by a call another request also got). */
  sharedReads: Counter<'route'>;
  /** The recorder of one route label. */
  route(route: string): RouteTimer;
}

const cache = new WeakMap<Metrics, ProxyMetrics>();

/** One histogram per app registry (tests build many apps in one process). */
export function proxyMetrics(metrics: Metrics): ProxyMetrics {
  let m = cache.get(metrics);
  if (!m) {
    const duration = new Histogram({
      name: 'bff_engine_proxy_duration_seconds',
      help: 'Engine round trip of proxied trading calls, by route and engine status (transport_error when none); for shared order book reads it includes the wait for the call in flight',
      labelNames: ['route', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [metrics.registry],
    });
    const sharedReads = new Counter({
      name: 'bff_engine_shared_reads_total',
      help: 'Proxied public reads answered by an engine call shared with identical concurrent requests (engine calls saved), by route',
      labelNames: ['route'],
      registers: [metrics.registry],
    });
    const routes = new Map<string, RouteTimer>();
    m = {
      duration,
      sharedReads,
      route(route) {
        let timer = routes.get(route);
        if (!timer) {
          const byOutcome = new Map<string, { observe(v: number): void }>();
          timer = {
            observe(outcome, seconds) {
              let child = byOutcome.get(outcome);
              if (!child) {
                child = duration.labels({ route, outcome });
                byOutcome.set(outcome, child);
              }
              child.observe(seconds);
            },
          };
          routes.set(route, timer);
        }
        return timer;
      },
    };
    cache.set(metrics, m);
  }
  return m;
}
