// Gauges read at scrape time from what the gateway already knows, for the dashboard and the alert
// rules (deploy/observability/): whether the engine event stream is connected and whether it
// reports a gap (the same state /readyz shows), and the database's reads in flight against its pool
// size. Collected on scrape, so nothing on the hot path changes and no other module keeps them.
import fp from 'fastify-plugin';
import { Gauge } from 'prom-client';
import { scrapedCounter as countScraped } from '../../metrics.js';

export const statusMetrics = fp(
  async (app) => {
    const { live, db, metrics, config } = app;
    const registers = [metrics.registry];
    const scrapedCounter = (name: string, help: string, total: () => number): void => countScraped(metrics.registry, name, help, total);
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
    // With NATS_URL: the replica against the engine's head (src/fleet/engine-lag.ts), computed at
    // each scrape, so a stall shows as a number that keeps growing, never as a frozen one.
    const lagGauge = (name: string, help: string, value: (lag: NonNullable<ReturnType<typeof lagOf>>) => number | null): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const lag = lagOf();
          const v = lag ? value(lag) : null;
          if (v !== null) this.set(v);
        },
      });
    };
    const lagOf = () => {
      const status = live?.status();
      return status?.enabled ? status.lag : undefined;
    };
    lagGauge('bff_stream_behind_events', "Engine events this replica lacks up to the engine's head (NATS_URL only)", (l) => l.events);
    lagGauge('bff_stream_behind_seconds', 'How long ago this replica last held everything the engine had; grows every second during a stall (NATS_URL only)', (l) => l.seconds);
    lagGauge('bff_stream_engine_head_seq', "The engine's newest seq as this replica last observed it (NATS_URL only)", (l) => l.engineHead);
    lagGauge('bff_stream_stalled', '1 while this replica is behind the engine and not moving (it recovers: new consumer, database fill), else 0 (NATS_URL only)', (l) => (l.stalled ? 1 : 0));
    new Gauge({
      name: 'bff_db_reads_in_flight',
      help: 'Database reads given their turn of the read pool and not yet settled (waiting for a connection or running)',
      registers,
      collect() {
        this.set(db.readsInFlight);
      },
    });
    new Gauge({
      name: 'bff_db_reads_waiting',
      help: "Database reads waiting for their turn of the read pool (the fair share between client addresses, ADR 0380)",
      registers,
      collect() {
        this.set(db.share.waiting);
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
    // The kept list rows (db/json/row-cache.ts): counted by the cache itself, reported here.
    scrapedCounter('bff_list_row_cache_hits_total', 'List rows (fills, events, deposits) written from their kept JSON instead of fetched (LIST_ROW_CACHE_BYTES)', () => db.rows.stats().hits);
    scrapedCounter(
      'bff_list_row_cache_database_changes_total',
      'Times the database under the kept list rows changed identity (restored, failed over, replaced): each emptied the row cache',
      () => db.rows.stats().databaseChanges,
    );
    scrapedCounter('bff_list_row_cache_misses_total', 'List rows (fills, events, deposits) whose version was not kept: fetched from the database, then kept', () => db.rows.stats().misses);
    new Gauge({
      name: 'bff_list_row_cache_bytes',
      help: 'Memory of list rows kept as written JSON, each row counted with its version and fixed cost (bounded by LIST_ROW_CACHE_BYTES)',
      registers,
      collect() {
        this.set(db.rows.stats().bytes);
      },
    });
  },
  { name: 'status-metrics', fastify: '5.x', dependencies: ['dependencies'] },
);
