// Verifications: what the engine claimed (its commitment events) against what the chain recorded.
//   user batches: events `engine.user_batch_committed` (party, payload.userSeq, payload.root)
//                 LEFT JOIN user_batches on its pk (party, user_seq)
//   manifests:    events `outbound.batch_committed` (payload.batchNum, payload.root)
//                 LEFT JOIN batches on its pk batch_num
// status: match (roots equal), mismatch (roots differ), pending (claim not on chain yet).
// Newest claim first by the event seq; cursor `before` = engineSeq.
//
// Index use: the claims are read newest first by seq (events pk, or (kind, seq) / (party, seq) when
// the planner prefers) inside a MATERIALIZED window, then each is checked with one pk probe of the
// chain table.
// The status is known only after that probe, so a status filter cannot be pushed into an index:
// instead, one request examines at most SCAN_WINDOW claims. When the window is exhausted before
// `limit` matches were found, the page is short (possibly empty) and `nextCursor` is the lowest claim
// seq examined, so the client continues below it; `nextCursor` is null only when no claim is left.
// Without a status filter every claim is a row, so the window is just `limit + 1`.
import type { Queryable } from '../database.js';
import type { Page } from './page.js';

export const VERIFICATION_STATUSES = ['match', 'mismatch', 'pending'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

/** Claims one filtered request may examine: bounds its cost (~100 ms) whatever the data size. */
export const SCAN_WINDOW = 10_000;

export interface UserBatchVerification {
  party: string;
  userSeq: number;
  engineRoot: string;
  chainRoot: string | null;
  status: VerificationStatus;
  engineSeq: number;
  committedAt: string | null;
}

export interface ManifestVerification {
  batchNum: number;
  engineRoot: string;
  chainRoot: string | null;
  status: VerificationStatus;
  engineSeq: number;
  committedAt: string | null;
}

export interface VerificationFilter {
  status?: VerificationStatus | undefined;
  party?: string | undefined;
  before?: number | undefined;
  limit: number;
  /** Claims a filtered request examines (default SCAN_WINDOW; tests use small ones). */
  window?: number | undefined;
}

type Windowed<T> = Partial<T> & { windowCount: number; windowLow: number | null; engineSeq: number | null };

/** Turns window rows (one stats row joined with up to limit+1 hits) into a page. */
function toPage<T extends { engineSeq: number }>(rows: Windowed<T>[], limit: number, window: number): Page<T> {
  const stats = rows[0];
  const hits = rows.filter((r) => r.engineSeq !== null).map(({ windowCount: _c, windowLow: _l, ...hit }) => hit as unknown as T);
  if (hits.length > limit) return { items: hits.slice(0, limit), nextCursor: hits[limit - 1]!.engineSeq };
  // The window was full: claims may remain below it even though this page is short.
  if (stats && stats.windowCount >= window && stats.windowLow !== null) return { items: hits, nextCursor: stats.windowLow };
  return { items: hits, nextCursor: null };
}

export async function verifyUserBatches(sql: Queryable, f: VerificationFilter): Promise<Page<UserBatchVerification>> {
  const window = f.status ? (f.window ?? SCAN_WINDOW) : f.limit + 1;
  const statusCond =
    f.status === 'pending' ? sql`AND ub.party IS NULL`
    : f.status === 'match' ? sql`AND ub.root = c.root`
    : f.status === 'mismatch' ? sql`AND ub.root <> c.root`
    : sql``;
  const rows = await sql<Windowed<UserBatchVerification>[]>`
    WITH claims AS MATERIALIZED (
      SELECT seq, party, (payload->>'userSeq')::bigint AS user_seq, payload->>'root' AS root
      FROM events
      WHERE kind = 'engine.user_batch_committed'
        ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
        ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
      ORDER BY seq DESC LIMIT ${window}
    ),
    stats AS (SELECT count(*)::int AS window_count, min(seq) AS window_low FROM claims),
    hits AS (
      SELECT c.party AS party, c.user_seq AS user_seq, c.root AS engine_root, ub.root AS chain_root,
             CASE WHEN ub.party IS NULL THEN 'pending' WHEN ub.root = c.root THEN 'match' ELSE 'mismatch' END AS status,
             c.seq AS engine_seq, ub.committed_at AS committed_at
      FROM claims c
      -- LATERAL … LIMIT 1 keeps this a pk probe per claim (a plain join may hash the whole chain table).
      LEFT JOIN LATERAL (
        SELECT party, root, committed_at FROM user_batches u WHERE u.party = c.party AND u.user_seq = c.user_seq LIMIT 1
      ) ub ON true
      WHERE true ${statusCond}
      ORDER BY c.seq DESC LIMIT ${f.limit + 1}
    )
    SELECT stats.window_count, stats.window_low, hits.* FROM stats LEFT JOIN hits ON true ORDER BY hits.engine_seq DESC`;
  return toPage(rows, f.limit, window);
}

export async function verifyManifests(sql: Queryable, f: VerificationFilter): Promise<Page<ManifestVerification>> {
  const window = f.status ? (f.window ?? SCAN_WINDOW) : f.limit + 1;
  const statusCond =
    f.status === 'pending' ? sql`AND b.batch_num IS NULL`
    : f.status === 'match' ? sql`AND b.root = c.root`
    : f.status === 'mismatch' ? sql`AND b.root <> c.root`
    : sql``;
  const rows = await sql<Windowed<ManifestVerification>[]>`
    WITH claims AS MATERIALIZED (
      SELECT seq, (payload->>'batchNum')::bigint AS batch_num, payload->>'root' AS root
      FROM events
      WHERE kind = 'outbound.batch_committed' ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
      ORDER BY seq DESC LIMIT ${window}
    ),
    stats AS (SELECT count(*)::int AS window_count, min(seq) AS window_low FROM claims),
    hits AS (
      SELECT c.batch_num AS batch_num, c.root AS engine_root, b.root AS chain_root,
             CASE WHEN b.batch_num IS NULL THEN 'pending' WHEN b.root = c.root THEN 'match' ELSE 'mismatch' END AS status,
             c.seq AS engine_seq, b.committed_at AS committed_at
      FROM claims c
      LEFT JOIN LATERAL (SELECT batch_num, root, committed_at FROM batches x WHERE x.batch_num = c.batch_num LIMIT 1) b ON true
      WHERE true ${statusCond}
      ORDER BY c.seq DESC LIMIT ${f.limit + 1}
    )
    SELECT stats.window_count, stats.window_low, hits.* FROM stats LEFT JOIN hits ON true ORDER BY hits.engine_seq DESC`;
  return toPage(rows, f.limit, window);
}
