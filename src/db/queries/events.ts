// Mirror events, oldest first by seq (pk), for backfill after a stream reconnect; cursor `since`.
// Indexes: pk seq, (kind, seq), (party, seq), (market, seq); with `party`, also fills (party, seq desc)
// for the fill events in which the party has a leg (they carry no top-level party).
import type { Queryable } from '../database.js';
import type { EngineEvent } from '../../contracts/engine-event.js';
import type { RowCache } from '../json/row-cache.js';
import { rowVersions, uniqueJsonPage, uniquePage, type Page, type Select } from './page.js';
import { rowShape } from '../json/row-shape.js';
import type { JsonBody } from '../json/json-body.js';
import { ENGINE_EVENT_KINDS } from '../../contracts/engine-event.js';

/** The REST `type` filter's value set: every engine event kind. */
export const EVENT_KINDS = ENGINE_EVENT_KINDS;

export interface EventRow {
  seq: number;
  kind: string;
  ts: string;
  market: string | null;
  party: string | null;
  payload: Record<string, unknown>;
}

/** A row as the engine's SSE envelope (the one EngineEvent type), null market/party omitted. */
export type EventEnvelope = EngineEvent;

export function toEnvelope(row: EventRow): EventEnvelope {
  return {
    seq: row.seq,
    kind: row.kind,
    ts: row.ts,
    ...(row.market !== null ? { market: row.market } : {}),
    ...(row.party !== null ? { party: row.party } : {}),
    payload: row.payload,
  };
}

export interface EventFilter {
  since?: number | undefined;
  kind?: string | undefined;
  party?: string | undefined;
  market?: string | undefined;
  limit: number;
}

/**
 * The envelope's columns in wire order: the schema's required fields first, then the optional market
 * and party (the order fast-json-stringify writes them in), each left out when null as `toEnvelope` does.
 */
export const EVENT_SHAPE = rowShape(
  [['seq', 'int'], ['kind', 'text'], ['ts', 'time'], ['payload', 'json'], ['market', 'text'], ['party', 'text']],
  ['market', 'party'],
);
const COLUMNS = EVENT_SHAPE.columns;
/** An event never changes once written: its JSON is kept by version (page.ts rowVersions). */
const EVENT_VERSIONS = rowVersions('events', ['seq'], EVENT_SHAPE);
const FILLED = 'engine.order_filled';

/**
 * `party` filter: the events whose `party` is P (index (party, seq)) AND the `engine.order_filled`
 * events in which P has a leg. A fill event carries no top-level party (its parties are in
 * `payload.legs`), so the second half comes from `fills (party, seq desc)`: the first `n` distinct
 * seqs of P's legs after the cursor, each fetched by one pk probe of `events` (LATERAL … LIMIT 1, so
 * the planner never hashes or scans `events`). Both halves are limited to `n` before they are
 * merged, which is exact: the first `n` of the union are among the first `n` of each half. A fill
 * event shows once however many legs P has (DISTINCT), and the second half skips events whose own
 * `party` is P (the first half has them).
 */
function eventQuery(sql: Queryable, f: EventFilter, select: Select = sql(COLUMNS)) {
  const after = (col: string) => (f.since !== undefined ? sql`AND ${sql(col)} > ${f.since}` : sql``);
  return (n: number) => {
    const direct = sql`
      SELECT ${select} FROM events
      WHERE true
        ${f.kind !== undefined ? sql`AND kind = ${f.kind}` : sql``}
        ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
        ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``}
        ${after('seq')}
      ORDER BY seq ASC LIMIT ${n}`;
    if (f.party === undefined || (f.kind !== undefined && f.kind !== FILLED)) return sql<EventRow[]>`${direct}`;
    return sql<EventRow[]>`
      SELECT * FROM (
        (${direct})
        UNION ALL
        (SELECT e.*
         FROM (SELECT DISTINCT seq FROM fills
               WHERE party = ${f.party} ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``} ${after('seq')}
               ORDER BY seq ASC LIMIT ${n}) l
         CROSS JOIN LATERAL (
           SELECT ${select} FROM events x
           WHERE x.seq = l.seq AND x.kind = ${FILLED} AND x.party IS DISTINCT FROM ${f.party}
           LIMIT 1) e)
      ) u
      ORDER BY seq ASC LIMIT ${n}`;
  };
}

export async function listEvents(sql: Queryable, f: EventFilter): Promise<Page<EventEnvelope>> {
  const page = await uniquePage<EventRow>(f.limit, (r) => r.seq, eventQuery(sql, f));
  return { items: page.items.map(toEnvelope), nextCursor: page.nextCursor };
}

/** The same page as `listEvents`, written as the route's JSON body (rows kept in `cache` reused). */
export function listEventsJson(sql: Queryable, f: EventFilter, cache?: RowCache): Promise<JsonBody> {
  return uniqueJsonPage(sql, f.limit, EVENT_SHAPE, 'seq', (select) => eventQuery(sql, f, select), cache && { cache, versions: EVENT_VERSIONS });
}

/**
 * Up to `limit` events after `after`, oldest first (pk range): the SSE bridge's second source when
 * the engine no longer holds them.
 */
export async function eventsAfter(sql: Queryable, after: number, limit: number): Promise<EventEnvelope[]> {
  const rows = await sql<EventRow[]>`
    SELECT ${sql(COLUMNS)} FROM events WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`;
  return rows.map(toEnvelope);
}
