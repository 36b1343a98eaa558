// Where the runtime's epoch (epoch.ts) reads seq 1 and the head: the mirror's `events` table, the
// engine's head, and the source's replay of seq 1, whichever transport the source is.
import type { Database } from '../db/database.js';
import type { EngineClient } from '../engine/client.js';
import { engineHead } from '../engine/engine-head.js';
import type { EngineEventSource } from '../contracts/engine-event-source.js';
import type { EpochSources } from './epoch.js';
import { eventStore } from './event-store.js';

/** How long the engine may take to replay its first event for the epoch. */
const FIRST_EVENT_MS = 5_000;
/** How long the engine's head may take to answer. */
const HEAD_MS = 2_000;

/** `store: false` after a replacement (the mirror may hold the old history). */
export function epochSources(db: Database, engine: EngineClient, source: EngineEventSource, options: { store: boolean }): EpochSources {
  const store = eventStore(db);
  return {
    engineHead: () => engineHead(engine, HEAD_MS),
    engineFirst: () => source.firstEvent(FIRST_EVENT_MS),
    storeFirst: async () => {
      if (!store || !options.store) return null;
      const [first] = await db.withDeadline(() => store(0, 1));
      return first ?? null;
    },
  };
}
