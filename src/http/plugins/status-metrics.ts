// Gauges read at scrape time from what the gateway already knows, for the dashboard and the alert
// rules (deploy/observability/): whether the engine event stream is connected and whether it
// reports a gap (the same state /readyz shows), and the database's reads in flight against its pool
// size. Collected on scrape, so nothing on the hot path changes and no other module keeps them.
import fp from 'fastify-plugin';
import { Gauge } from 'prom-client';

export const statusMetrics = fp(
  async (app) => {
    const { live, db, metrics, config } = app;
    const registers = [metrics.registry];
    new Gauge({
      name: 'bff_engine_stream_connected',
      help: '1 while the engine event stream (SSE bridge or JetStream source) is connected and caught up, else 0; absent without a live stream',
      registers,
      collect() {
        const status = live?.status();
        if (status?.enabled) this.set(status.connected ? 1 : 0);
      },
    });
    new Gauge({
      name: 'bff_engine_stream_gap',
      help: '1 while the engine event stream reports events it could not get from the engine nor the database (as /readyz does), else 0',
      registers,
      collect() {
        const status = live?.status();
        if (status?.enabled) this.set(status.gap ? 1 : 0);
      },
    });
    new Gauge({
      name: 'bff_db_reads_in_flight',
      help: 'Database reads started and not yet settled (queued for a pool connection or running)',
      registers,
      collect() {
        this.set(db.readsInFlight);
      },
    });
    new Gauge({
      name: 'bff_db_pool_max',
      help: 'Connections the database pool may open (DB_POOL_MAX); 0 without DATABASE_URL',
      registers,
      collect() {
        this.set(db.configured ? config.dbPoolMax : 0);
      },
    });
  },
  { name: 'status-metrics', fastify: '5.x', dependencies: ['dependencies'] },
);
