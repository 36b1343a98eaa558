// Reads of the commitment check and the proof route (docs/verification.md).
// Indexes: events (kind, seq) for the manifests, (party, seq) for a party's claims and events,
// fills (party, seq desc) for the fill events a party has a leg in; user_batches pk (party,
// user_seq) and (batch_num); batches pk batch_num. No read scans a table.
import type { Queryable } from '../database.js';
import { EVENT_TEXT_COLUMNS } from '../json/canonical-event.js';
import { intAt, type RawRow } from '../json/row-shape.js';

const USER_CLAIM = 'engine.user_batch_committed';
const MANIFEST_CLAIM = 'outbound.batch_committed';
const COLUMNS: string[] = [...EVENT_TEXT_COLUMNS];

/** Seq of the newest manifest claim at or below `seq`, or null when there is none. */
export async function lastManifestSeq(sql: Queryable, seq: number): Promise<number | null> {
  const [row] = await sql<Array<{ seq: number | null }>>`
    SELECT seq FROM events WHERE kind = ${MANIFEST_CLAIM} AND seq <= ${seq} ORDER BY seq DESC LIMIT 1`;
  return row?.seq ?? null;
}

export interface ChainUserBatch {
  party: string;
  userSeq: number;
  batchNum: number | null;
  root: string;
  prevRoot: string;
  eventCount: number;
  txId: string;
  committedAt: string;
}

export interface ChainManifest {
  batchNum: number;
  root: string;
  firstSeq: number;
  lastSeq: number;
  txId: string;
  committedAt: string;
}

export async function chainUserBatch(sql: Queryable, party: string, userSeq: number): Promise<ChainUserBatch | null> {
  const [row] = await sql<ChainUserBatch[]>`
    SELECT party, user_seq, batch_num, root, prev_root, event_count, tx_id, committed_at
    FROM user_batches WHERE party = ${party} AND user_seq = ${userSeq}`;
  return row ?? null;
}

export async function chainManifest(sql: Queryable, batchNum: number): Promise<ChainManifest | null> {
  const [row] = await sql<ChainManifest[]>`
    SELECT batch_num, root, first_seq, last_seq, tx_id, committed_at FROM batches WHERE batch_num = ${batchNum}`;
  return row ?? null;
}

/** The user roots the chain recorded under one manifest, with their parties (unordered). */
export async function manifestMembers(sql: Queryable, batchNum: number): Promise<Array<{ party: string; root: string }>> {
  return sql<Array<{ party: string; root: string }>>`SELECT party, root FROM user_batches WHERE batch_num = ${batchNum}`;
}

/** A user batch as the chain recorded it, with its manifest and the engine's claim of it. */
export interface RecordedUserBatch extends ChainUserBatch {
  manifestRoot: string | null;
  /** Seq of the engine's claim of this batch in the mirror (null when the mirror has none). */
  claimSeq: number | null;
}

/**
 * One round trip: the chain's user batch (pk), its manifest (pk), and the engine's claim, found as
 * the party's first claim after the manifest's last_seq (every claim of a manifest follows the last
 * event of its user batches, and the party's earlier claims precede this batch's events).
 */
export async function recordedUserBatch(sql: Queryable, party: string, userSeq: number): Promise<RecordedUserBatch | null> {
  const [row] = await recordedUserBatches(sql, party, userSeq - 1, 1);
  return row?.userSeq === userSeq ? row : null;
}

export interface UserClaim {
  seq: number;
  userSeq: number;
  root: string;
  prevRoot: string;
  eventCount: number;
}

function toClaim(row: { seq: number; payload: Record<string, unknown> }): UserClaim {
  const p = row.payload;
  return { seq: row.seq, userSeq: Number(p.userSeq), root: String(p.root), prevRoot: String(p.prevRoot), eventCount: Number(p.eventCount) };
}

/**
 * The engine's claim of (party, userSeq), found from a seq it must follow: every claim of a manifest
 * follows the last event of that manifest (`afterSeq` = the manifest's last_seq), so the party's first
 * claim after it is the one. Without a manifest (a claim not on chain yet) the party's claims are
 * walked newest first, which reaches the recent ones (the only ones not on chain) at once.
 */
export async function userClaim(sql: Queryable, party: string, userSeq: number, afterSeq: number | null): Promise<UserClaim | null> {
  if (afterSeq !== null) {
    const [row] = await sql<Array<{ seq: number; payload: Record<string, unknown> }>>`
      SELECT seq, payload FROM events WHERE party = ${party} AND seq > ${afterSeq} AND kind = ${USER_CLAIM}
      ORDER BY seq ASC LIMIT 1`;
    if (row && Number(row.payload.userSeq) === userSeq) return toClaim(row);
  }
  const [row] = await sql<Array<{ seq: number; payload: Record<string, unknown> }>>`
    SELECT seq, payload FROM events WHERE party = ${party} AND kind = ${USER_CLAIM} AND payload->>'userSeq' = ${String(userSeq)}
    ORDER BY seq DESC LIMIT 1`;
  return row ? toClaim(row) : null;
}

/**
 * The events of a party's user batch, given its claim's seq: those after the party's previous claim
 * (none: from the start) and before this one whose `party` is the party (claims excepted), and the
 * fill events it has a leg in, each once, in seq order, as raw rows of EVENT_TEXT_COLUMNS (written
 * as canonical JSON by canonical-event.ts). The previous claim is found by walking the party's
 * events back from this claim (index (party, seq)): about the batch's size.
 */
export async function batchEventRows(sql: Queryable, party: string, claimSeq: number): Promise<RawRow[]> {
  return (await batchesEventRows(sql, party, [claimSeq])).get(claimSeq) ?? [];
}

/**
 * The chain's user batches of a party with userSeq > `since`, ascending, at most `limit`, each with
 * its manifest and the engine's claim (pk range of user_batches; per row one probe of batches and
 * one of events (party, seq)).
 */
export async function recordedUserBatches(sql: Queryable, party: string, since: number, limit: number): Promise<RecordedUserBatch[]> {
  const rows = await sql<Array<RecordedUserBatch & { claimUserSeq: string | null }>>`
    SELECT ub.party, ub.user_seq, ub.batch_num, ub.root, ub.prev_root, ub.event_count, ub.tx_id, ub.committed_at,
           b.root AS manifest_root, c.seq AS claim_seq, c.user_seq AS claim_user_seq
    FROM user_batches ub
    LEFT JOIN batches b ON b.batch_num = ub.batch_num
    LEFT JOIN LATERAL (
      SELECT seq, payload->>'userSeq' AS user_seq FROM events
      WHERE party = ub.party AND seq > b.last_seq AND kind = ${USER_CLAIM} ORDER BY seq ASC LIMIT 1) c ON true
    WHERE ub.party = ${party} AND ub.user_seq > ${since}
    ORDER BY ub.user_seq ASC LIMIT ${limit}`;
  return rows.map(({ claimUserSeq, ...rest }) => ({ ...rest, claimSeq: claimUserSeq === String(rest.userSeq) ? rest.claimSeq : null }));
}

/** The user roots the chain recorded under each of several manifests, with their parties and batch numbers. */
export async function manifestsMembers(sql: Queryable, batchNums: readonly number[]): Promise<Map<number, Array<{ party: string; root: string }>>> {
  const out = new Map<number, Array<{ party: string; root: string }>>();
  if (batchNums.length === 0) return out;
  const rows = await sql<Array<{ batchNum: number; party: string; root: string }>>`
    SELECT batch_num, party, root FROM user_batches WHERE batch_num IN ${sql([...batchNums])}`;
  for (const r of rows) {
    const list = out.get(r.batchNum) ?? [];
    list.push({ party: r.party, root: r.root });
    out.set(r.batchNum, list);
  }
  return out;
}

/**
 * The events of several user batches of a party in one read, given their claims' seqs: exactly what
 * batchEventRows gives for each claim (the events after the party's previous claim, whichever it is,
 * and before this one), read as one span from the claim before the lowest to the highest and split
 * at the party's claims within it. Raw rows: no column is decoded, the payload stays jsonb's text.
 *
 * The span is read as two statements at once on two connections, neither sorted by the server: the
 * party's own events (index (party, seq)) and the fill events it has a leg in (fills (party, seq),
 * then events pk). The rows are put in seq order here: a page of proofs is some 10 000 rows of about
 * 700 bytes, which PostgreSQL sorted on disk past its work_mem, the largest part of the read.
 */
export async function batchesEventRows(sql: Queryable, party: string, claimSeqs: readonly number[]): Promise<Map<number, RawRow[]>> {
  const out = new Map<number, RawRow[]>();
  if (claimSeqs.length === 0) return out;
  const low = Math.min(...claimSeqs);
  const high = Math.max(...claimSeqs);
  // The party's claim before the lowest (0: none), found again by each statement (one index probe).
  const prev = () => sql`(SELECT coalesce((SELECT seq FROM events WHERE party = ${party} AND seq < ${low} AND kind = ${USER_CLAIM}
                       ORDER BY seq DESC LIMIT 1), 0))`;
  const [own, fills] = (await Promise.all([
    sql`SELECT ${sql(COLUMNS)} FROM events WHERE party = ${party} AND seq > ${prev()} AND seq <= ${high}`.raw(),
    sql`
      SELECT e.seq, e.kind, e.ts, e.market, e.party, e.payload
      FROM (SELECT DISTINCT seq FROM fills WHERE party = ${party} AND seq > ${prev()} AND seq < ${high}) l
      CROSS JOIN LATERAL (
        SELECT ${sql(COLUMNS)} FROM events x WHERE x.seq = l.seq AND x.kind = 'engine.order_filled' AND x.party IS NULL LIMIT 1) e`.raw(),
  ])) as unknown as [RawRow[], RawRow[]];
  const rows = bySeq(own, fills);
  const wanted = new Set(claimSeqs);
  const claimKind = Buffer.from(USER_CLAIM, 'utf8');
  const partyBytes = Buffer.from(party, 'utf8');
  let segment: RawRow[] = [];
  for (const row of rows) {
    if (isClaimOf(row, claimKind, partyBytes)) {
      const seq = intAt(row, SEQ_COLUMN);
      if (wanted.has(seq)) out.set(seq, segment);
      segment = [];
    } else segment.push(row);
  }
  return out;
}

const SEQ_COLUMN = COLUMNS.indexOf('seq');

/** The rows of both reads in seq order (the seqs are distinct: the events table's key). */
export function bySeq(a: readonly RawRow[], b: readonly RawRow[]): RawRow[] {
  const x = ascending(a);
  const y = ascending(b);
  const out = new Array<RawRow>(x.rows.length + y.rows.length);
  let i = 0;
  let j = 0;
  for (let k = 0; k < out.length; k++) {
    if (j >= y.rows.length || (i < x.rows.length && x.seqs[i]! < y.seqs[j]!)) out[k] = x.rows[i++]!;
    else out[k] = y.rows[j++]!;
  }
  return out;
}

/**
 * The rows in ascending seq order, with their seqs. A read without ORDER BY comes in the order its
 * plan found the rows: in the table's order (ascending, the events are appended in seq order) or an
 * index read backwards (descending) for the most part, so those are taken as they are or reversed;
 * any other order is sorted.
 */
function ascending(rows: readonly RawRow[]): { rows: readonly RawRow[]; seqs: Float64Array } {
  const n = rows.length;
  const seqs = new Float64Array(n);
  let up = true;
  let down = true;
  for (let i = 0; i < n; i++) {
    seqs[i] = intAt(rows[i]!, SEQ_COLUMN);
    if (i > 0) {
      if (seqs[i]! < seqs[i - 1]!) up = false;
      else down = false;
    }
  }
  if (up) return { rows, seqs };
  if (down) return { rows: [...rows].reverse(), seqs: seqs.reverse() };
  const order = Array.from({ length: n }, (_, i) => i).sort((p, q) => seqs[p]! - seqs[q]!);
  return { rows: order.map((i) => rows[i]!), seqs: Float64Array.from(order, (i) => seqs[i]!) };
}
const KIND_COLUMN = COLUMNS.indexOf('kind');
const PARTY_COLUMN = COLUMNS.indexOf('party');

function isClaimOf(row: RawRow, claimKind: Buffer, party: Buffer): boolean {
  const kind = row[KIND_COLUMN];
  const owner = row[PARTY_COLUMN];
  return kind != null && owner != null && claimKind.equals(kind) && party.equals(owner);
}

/** The manifests the chain recorded after manifest `after`, ascending, at most `limit` (one index range of batches). */
export async function newManifests(sql: Queryable, after: number, limit: number): Promise<number[]> {
  const rows = await sql<Array<{ batchNum: string | number }>>`SELECT batch_num AS "batchNum" FROM batches WHERE batch_num > ${after} ORDER BY batch_num ASC LIMIT ${limit}`;
  return rows.map((r) => Number(r.batchNum));
}

/**
 * Where building proofs ahead starts (ADR 0382): the manifest just before the newest ones whose
 * user batches hold at most `events` events together, looked for among the newest `scan`
 * manifests; the newest manifest when even it holds more; 0 when the chain recorded none.
 */
export async function buildAheadStart(sql: Queryable, events: number, scan: number): Promise<number> {
  const rows = await sql<Array<{ after: string | number }>>`
    SELECT coalesce(
      (SELECT min(batch_num) FROM (
         SELECT b.batch_num, sum(sum(ub.event_count)) OVER (ORDER BY b.batch_num DESC) AS total
         FROM (SELECT batch_num FROM batches ORDER BY batch_num DESC LIMIT ${scan}) b
         JOIN user_batches ub ON ub.batch_num = b.batch_num
         GROUP BY b.batch_num) w
       WHERE total <= ${events}),
      (SELECT max(batch_num) + 1 FROM batches),
      1) - 1 AS after`;
  return Number(rows[0]!.after);
}

/** The parties of a contiguous range of manifests, each with its first user batch in them and how many it has. */
export async function manifestsParties(sql: Queryable, batchNums: readonly number[]): Promise<Array<{ party: string; fromUserSeq: number; count: number }>> {
  if (batchNums.length === 0) return [];
  const rows = await sql<Array<{ party: string; fromUserSeq: string | number; count: string | number }>>`
    SELECT party, min(user_seq) AS "fromUserSeq", count(*) AS count FROM user_batches WHERE batch_num IN ${sql([...batchNums])} GROUP BY party ORDER BY party`;
  return rows.map((r) => ({ party: r.party, fromUserSeq: Number(r.fromUserSeq), count: Number(r.count) }));
}
