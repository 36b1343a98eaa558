// Mirror events, oldest first by seq (pk), for backfill after a stream reconnect; cursor `since`.
// Indexes: pk seq, (kind, seq), (party, seq), (market, seq).
import type { Queryable } from '../database.js';
import { uniquePage, type Page } from './page.js';

/** Every engine event kind (engine contract §5). */
export const EVENT_KINDS = [
  'engine.tick_start',
  'inbound.deposit',
  'inbound.withdrawal_request',
  'engine.approve_submitted',
  'engine.reject_submitted',
  'session.authorized',
  'inbound.order',
  'engine.order_placed',
  'engine.order_filled',
  'engine.order_cancelled',
  'engine.order_rejected',
  'engine.trigger_set',
  'engine.trigger_cancelled',
  'engine.trigger_fired',
  'engine.attached_resolved',
  'engine.user_batch_committed',
  'outbound.batch_committed',
] as const;

export interface EventRow {
  seq: number;
  kind: string;
  ts: string;
  market: string | null;
  party: string | null;
  payload: Record<string, unknown>;
}

/** The engine's SSE envelope, with null market/party omitted. */
export interface EventEnvelope {
  seq: number;
  kind: string;
  ts: string;
  market?: string;
  party?: string;
  payload: Record<string, unknown>;
}

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

export async function listEvents(sql: Queryable, f: EventFilter): Promise<Page<EventEnvelope>> {
  const page = await uniquePage<EventRow>(f.limit, (r) => r.seq, (n) => sql<EventRow[]>`
    SELECT seq, kind, ts, market, party, payload FROM events
    WHERE true
      ${f.kind !== undefined ? sql`AND kind = ${f.kind}` : sql``}
      ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
      ${f.market !== undefined ? sql`AND market = ${f.market}` : sql``}
      ${f.since !== undefined ? sql`AND seq > ${f.since}` : sql``}
    ORDER BY seq ASC LIMIT ${n}`);
  return { items: page.items.map(toEnvelope), nextCursor: page.nextCursor };
}
