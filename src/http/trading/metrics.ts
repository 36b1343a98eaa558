// Engine round-trip time of proxied calls, so an operator can tell gateway overhead from engine time.
import { Histogram } from 'prom-client';
import type { Metrics } from '../../metrics.js';

/**
 * What one route records. The label objects are built once per (route, outcome) and reused, so a
 * call costs one `observe` (no `startTimer` closures, no `Object.assign` of label sets).
 */
export interface RouteTimer {
  observe(outcome: string, seconds: number): void;
}

export interface ProxyMetrics {
  duration: Histogram<'route' | 'outcome'>;
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
      help: 'Engine round trip of proxied trading calls, by route and engine status (transport_error when none)',
      labelNames: ['route', 'outcome'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [metrics.registry],
    });
    const routes = new Map<string, RouteTimer>();
    m = {
      duration,
      route(route) {
        let timer = routes.get(route);
        if (!timer) {
          const labelSets = new Map<string, { route: string; outcome: string }>();
          timer = {
            observe(outcome, seconds) {
              let labels = labelSets.get(outcome);
              if (!labels) {
                labels = { route, outcome };
                labelSets.set(outcome, labels);
              }
              duration.observe(labels, seconds);
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
