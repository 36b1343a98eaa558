// Verifications: what the engine claimed (its commitment events) against what the chain recorded.
//   user batches: events `engine.user_batch_committed` (party, payload.userSeq, payload.root)
//                 LEFT JOIN user_batches on its pk (party, user_seq)
//   manifests:    events `outbound.batch_committed` (payload.batchNum, payload.root)
//                 LEFT JOIN batches on its pk batch_num
// status: match (roots equal), mismatch (roots differ), pending (claim not on chain yet).
// Newest claim first by the event seq; cursor `before` = engineSeq.
//
// Index use: claims are read by seq through the events pk or (kind, seq), each checked with one pk
// probe of the chain table (LATERAL … LIMIT 1, so the planner never hashes a whole chain table).
// The status is only known after that probe, so no index can serve a status filter: the filtered
// pages are chosen by the gateway's claim-status index (src/http/reads/claim-status-index.ts), which these
// statements keep current (`claimsAfter`, `claimStatuses`) and whose chosen claims `verificationRows`
// reads back as rows, status recomputed (docs/adr/0101-verification-filters-from-a-claim-status-index.md).
import type { Queryable } from '../database.js';
import type { Page } from './page.js';

export const VERIFICATION_STATUSES = ['match', 'mismatch', 'pending'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

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
}

/** The two claim families: the claim event kind and how a claim is checked against the chain. */
export type ClaimFamily = 'user-batches' | 'manifests';

const KIND: Record<ClaimFamily, string> = {
  'user-batches': 'engine.user_batch_committed',
  manifests: 'outbound.batch_committed',
};

/** One claim's status, as the status index keeps it. */
export interface ClaimStatus {
  seq: number;
  party: string | null;
  status: VerificationStatus;
}

/**
 * What checking a claim against the chain needs: its chain key (the user batch's party and userSeq,
 * or the manifest's batchNum) and the root the engine claimed. The index keeps it for pending claims.
 */
export interface ClaimKey {
  seq: number;
  party: string | null;
  key: number;
  root: string;
}

/**
 * The verification rows of a claim set (`c`: seq, party, key, root), newest first. `chain` is the
 * pk probe of the family's chain table.
 */
function rowsOf(sql: Queryable, family: ClaimFamily, claims: ReturnType<Queryable>) {
  if (family === 'user-batches') {
    return sql`
      SELECT c.party AS party, c.user_seq AS user_seq, c.root AS engine_root, ub.root AS chain_root,
             CASE WHEN ub.party IS NULL THEN 'pending' WHEN ub.root = c.root THEN 'match' ELSE 'mismatch' END AS status,
             c.seq AS engine_seq, ub.committed_at AS committed_at
      FROM (
        SELECT seq, party, (payload->>'userSeq')::bigint AS user_seq, payload->>'root' AS root FROM events e ${claims}
      ) c
      LEFT JOIN LATERAL (
        SELECT party, root, committed_at FROM user_batches u WHERE u.party = c.party AND u.user_seq = c.user_seq LIMIT 1
      ) ub ON true
      ORDER BY c.seq DESC`;
  }
  return sql`
    SELECT c.batch_num AS batch_num, c.root AS engine_root, b.root AS chain_root,
           CASE WHEN b.batch_num IS NULL THEN 'pending' WHEN b.root = c.root THEN 'match' ELSE 'mismatch' END AS status,
           c.seq AS engine_seq, b.committed_at AS committed_at
    FROM (
      SELECT seq, (payload->>'batchNum')::bigint AS batch_num, payload->>'root' AS root FROM events e ${claims}
    ) c
    LEFT JOIN LATERAL (SELECT batch_num, root, committed_at FROM batches x WHERE x.batch_num = c.batch_num LIMIT 1) b ON true
    ORDER BY c.seq DESC`;
}

/** Newest claims first, unfiltered (every claim is a row): one statement of `limit + 1` claims. */
async function unfiltered<T extends { engineSeq: number }>(sql: Queryable, family: ClaimFamily, f: VerificationFilter): Promise<Page<T>> {
  const rows = await sql<T[]>`${rowsOf(sql, family, sql`
    WHERE kind = ${KIND[family]}
      ${f.party !== undefined ? sql`AND party = ${f.party}` : sql``}
      ${f.before !== undefined ? sql`AND seq < ${f.before}` : sql``}
    ORDER BY seq DESC LIMIT ${f.limit + 1}`)}`;
  if (rows.length <= f.limit) return { items: [...rows], nextCursor: null };
  return { items: rows.slice(0, f.limit), nextCursor: rows[f.limit - 1]!.engineSeq };
}

export function verifyUserBatches(sql: Queryable, f: Omit<VerificationFilter, 'status'>): Promise<Page<UserBatchVerification>> {
  return unfiltered(sql, 'user-batches', f);
}

export function verifyManifests(sql: Queryable, f: Omit<VerificationFilter, 'status' | 'party'>): Promise<Page<ManifestVerification>> {
  return unfiltered(sql, 'manifests', f);
}

/** The verification rows of these claim seqs (any order in; newest first out), status recomputed. */
export async function verificationRows<T extends object>(sql: Queryable, family: ClaimFamily, seqs: readonly number[]): Promise<T[]> {
  return [...(await sql<T[]>`${rowsOf(sql, family, sql`WHERE seq IN ${sql(seqs as number[])} AND kind = ${KIND[family]}`)}`)];
}

export interface ClaimRow {
  engineSeq: number;
  party?: string;
  userSeq?: number;
  batchNum?: number;
  engineRoot: string;
  status: VerificationStatus;
}

/** A verification row (either family) as the status index keeps it: status, and the claim's key. */
export function claimOf(r: ClaimRow): ClaimStatus & ClaimKey {
  return { seq: r.engineSeq, party: r.party ?? null, status: r.status, key: r.userSeq ?? r.batchNum ?? 0, root: r.engineRoot };
}

/** Every claim above `after` (oldest first) with its status: how the status index grows. */
export async function claimsAfter(sql: Queryable, family: ClaimFamily, after: number, limit: number): Promise<Array<ClaimStatus & ClaimKey>> {
  const rows = await sql<ClaimRow[]>`${rowsOf(sql, family, sql`
    WHERE kind = ${KIND[family]} AND seq > ${after} ORDER BY seq LIMIT ${limit}`)}`;
  return rows.map(claimOf).reverse();
}

/**
 * Which of these pending claims the chain has recorded since, with their status now: only the
 * chain table is probed (one pk probe a claim, LATERAL … LIMIT 1 as above: the keys come from the
 * index, not from `events`), and the roots are compared here; a claim not returned is still pending.
 * The keys go as two array literals (cheaper for PostgreSQL to read than a JSON document).
 */
export async function claimsOnChain(sql: Queryable, family: ClaimFamily, claims: readonly ClaimKey[]): Promise<ClaimStatus[]> {
  // A user batch claim without a party can never join its chain row (the pk has the party).
  const probed = family === 'user-batches' ? claims.filter((c) => c.party !== null) : claims;
  if (probed.length === 0) return [];
  const keys = `{${probed.map((c) => c.key).join(',')}}`;
  const rows =
    family === 'user-batches'
      ? await sql<Array<{ i: number; root: string | null }>>`
          SELECT k.i, u.root
          FROM unnest(${textArray(probed.map((c) => c.party!))}::text::text[], ${keys}::text::bigint[]) WITH ORDINALITY AS k(party, key, i)
          CROSS JOIN LATERAL (SELECT root FROM user_batches x WHERE x.party = k.party AND x.user_seq = k.key LIMIT 1) u`
      : await sql<Array<{ i: number; root: string | null }>>`
          SELECT k.i, b.root
          FROM unnest(${keys}::text::bigint[]) WITH ORDINALITY AS k(key, i)
          CROSS JOIN LATERAL (SELECT root FROM batches x WHERE x.batch_num = k.key LIMIT 1) b`;
  return rows.map((r) => {
    const c = probed[r.i - 1]!;
    return { seq: c.seq, party: c.party, status: r.root === c.root ? 'match' : 'mismatch' };
  });
}

/** A PostgreSQL text array literal: every element quoted, `"` and `\` escaped. */
function textArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
}

/** The newest claim seq of a family (one probe of `events (kind, seq)`); null without any. */
export async function claimHead(sql: Queryable, family: ClaimFamily): Promise<number | null> {
  const rows = await sql<{ seq: number }[]>`SELECT seq FROM events WHERE kind = ${KIND[family]} ORDER BY seq DESC LIMIT 1`;
  return rows[0]?.seq ?? null;
}
