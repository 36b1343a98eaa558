// Trading sessions mirrored by the indexer (`sessions`, pk session_id): the authenticate guard's
// source for sessions made before this process started or while the SSE bridge was down.
import type { Queryable } from '../database.js';

export interface SessionRow {
  sessionId: string;
  party: string;
  publicKey: string;
  expiresAt: string;
}

/** The session with this id, or null. One pk probe. */
export async function sessionById(sql: Queryable, sessionId: string): Promise<SessionRow | null> {
  const rows = await sql<SessionRow[]>`
    SELECT session_id, party, public_key, expires_at FROM sessions WHERE session_id = ${sessionId}`;
  return rows[0] ?? null;
}
