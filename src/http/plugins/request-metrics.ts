// bff_http_requests_total and bff_http_request_duration_seconds per (method, route template, status).
// Every request, so callback style, and the metric children of each label set made once: a child's
// inc/observe skips prom-client's hashing of the label set on every call.
import fp from 'fastify-plugin';

interface RouteMetrics {
  count: { inc(): void };
  duration: { observe(v: number): void };
}

export const requestMetrics = fp(
  async (app) => {
    const { metrics } = app;
    const children = new Map<string, RouteMetrics>();
    app.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched';
      const key = `${request.method} ${reply.statusCode} ${route}`;
      let child = children.get(key);
      if (!child) {
        const labels = { method: request.method, route, status: String(reply.statusCode) };
        child = { count: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
        children.set(key, child);
      }
      child.count.inc();
      child.duration.observe(reply.elapsedTime / 1000);
      done();
    });
  },
  { name: 'request-metrics', fastify: '5.x', dependencies: ['dependencies'] },
);
