// The indexer's `events` table as the SSE bridge's second source: when the engine no longer has
// events (410, since before retention), they are read from here. Each row rebuilds the engine's
// envelope; null market/party are omitted as on the wire.
import type { Database } from '../db/database.js';
import type { EngineEvent } from '../projections/types.js';

interface Row {
  seq: number;
  kind: string;
  ts: string;
  market: string | null;
  party: string | null;
  payload: Record<string, unknown>;
}

export function eventStore(db: Database): ((after: number, limit: number) => Promise<EngineEvent[]>) | null {
  const sql = db.sql;
  if (!sql) return null;
  return async (after, limit) => {
    const rows = await sql<Row[]>`
      SELECT seq, kind, ts, market, party, payload FROM events
      WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`;
    return rows.map((r) => {
      const e: EngineEvent = { seq: Number(r.seq), kind: r.kind, ts: new Date(r.ts).toISOString(), payload: r.payload };
      if (r.market !== null) e.market = r.market;
      if (r.party !== null) e.party = r.party;
      return e;
    });
  };
}
