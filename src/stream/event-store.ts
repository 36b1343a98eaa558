// The indexer's `events` table as the SSE bridge's second source: when the engine no longer has
// events (410, since before retention), they are read from here, behind the one database deadline.
// Each row rebuilds the engine's envelope; null market/party are omitted as on the wire.
import type { Database } from '../db/database.js';
import { eventsAfter } from '../db/queries/events.js';
import type { EngineEvent } from '../contracts/engine-event.js';

export function eventStore(db: Database): ((after: number, limit: number) => Promise<EngineEvent[]>) | null {
  if (!db.configured) return null;
  return (after, limit) => db.run((sql) => eventsAfter(sql, after, limit));
}
