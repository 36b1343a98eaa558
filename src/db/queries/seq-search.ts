// Time → seq, without an index on time. `fills.created_at` grows with `seq` (both come from the
// engine, which stamps events in order), so the first seq at or after an instant is found by a
// binary search over the primary key: about log2(max seq) probes of one row each (`seq >= mid
// ORDER BY seq LIMIT 1`), all in one statement as a recursive CTE. A time-ranged read then walks an
// existing seq index (`(market, seq desc)` or the pk) between two such bounds instead of scanning
// the table, and keeps an exact `created_at` filter on top. An engine clock step back can only
// misplace the handful of rows around the step.
import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from '../database.js';

/**
 * A recursive CTE `<name>(lo, hi)` whose final row (`lo >= hi`) holds in `lo` a seq such that every
 * fill below it was created before `iso`, and the first fill at or above it was not. Use it as
 * `(SELECT lo FROM <name> WHERE lo >= hi)`; it needs `WITH RECURSIVE`.
 */
export function seqSearch(sql: Queryable, name: string, iso: string): PendingQuery<Row[]> {
  const at = sql`${iso}::timestamptz`;
  return sql`${sql(name)}(lo, hi) AS (
    SELECT 0::int8, coalesce((SELECT seq FROM fills ORDER BY seq DESC LIMIT 1), 0) + 1
    UNION ALL
    SELECT CASE WHEN p.at IS NULL OR p.at >= ${at} THEN s.lo ELSE p.seq + 1 END,
           CASE WHEN p.at IS NULL OR p.at >= ${at} THEN (s.lo + s.hi) / 2 ELSE s.hi END
    FROM ${sql(name)} s
    LEFT JOIN LATERAL (
      SELECT f.seq, f.created_at AS at FROM fills f WHERE f.seq >= (s.lo + s.hi) / 2 ORDER BY f.seq LIMIT 1
    ) p ON true
    WHERE s.lo < s.hi)`;
}

/** The bound a `seqSearch` CTE found, as a scalar subquery. */
export function seqBound(sql: Queryable, name: string): PendingQuery<Row[]> {
  return sql`(SELECT lo FROM ${sql(name)} WHERE lo >= hi)`;
}
