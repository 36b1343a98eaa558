// Engine round-trip time of proxied calls, so an operator can tell gateway overhead from engine time.
import { Histogram } from 'prom-client';
import type { Metrics } from '../../metrics.js';

export interface ProxyMetrics {
  duration: Histogram<'route' | 'outcome'>;
}

const cache = new WeakMap<Metrics, ProxyMetrics>();

/** One histogram per app registry (tests build many apps in one process). */
export function proxyMetrics(metrics: Metrics): ProxyMetrics {
  let m = cache.get(metrics);
  if (!m) {
    m = {
      duration: new Histogram({
        name: 'bff_engine_proxy_duration_seconds',
        help: 'Engine round trip of proxied trading calls, by route and engine status (transport_error when none)',
        labelNames: ['route', 'outcome'],
        buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
        registers: [metrics.registry],
      }),
    };
    cache.set(metrics, m);
  }
  return m;
}
