// The proof of one user batch (GET /v1/users/:party/user-batches/:userSeq/proof, docs/verification.md):
// the batch's events from the mirror, what the chain recorded for it and for its manifest, and the
// sibling path from the user root up to the manifest root. The gateway's `status` is a convenience;
// a client recomputes everything from `events`, `chain` and `path` (packages/client verifyUserBatch).
import type { Sql } from 'postgres';
import { byParty, type PathStep } from '../../packages/client/src/verify/scheme.js';
import { batchEventRows, batchesEventRows, manifestMembers, manifestsMembers, recordedUserBatch, recordedUserBatches, userClaim, type RecordedUserBatch } from '../db/queries/commitments.js';
import { canonicalEvents, type CanonicalEvents } from '../db/json/canonical-event.js';
import type { RawRow } from '../db/json/row-shape.js';
import { leafOfInput, manifestPath, rootOf, userRootLeaf, nodeHash } from './hash.js';

export type ProofStatus = 'verified' | 'mismatch' | 'pending';

export interface ChainRecord {
  userRoot: string;
  prevRoot: string;
  eventCount: number;
  batchNum: number | null;
  txId: string | null;
  committedAt: string;
  manifestRoot: string | null;
}

export interface UserBatchProof {
  party: string;
  userSeq: number;
  status: ProofStatus;
  reason?: 'events' | 'manifest' | 'record';
  /** With reason `record`: what in the chain's record the contract does not allow. */
  problem?: string;
  /** How many events the batch holds. */
  eventCount: number;
  /**
   * The members of `events`: each event's canonical JSON (the text its leaf hashes), in order,
   * comma-separated, written from the rows' bytes (canonical-event.ts, ADR 0360). What an answer
   * writes for `events` (writeProof), so an event is made canonical once, for the status and the
   * answer alike, and a client's canonical form of it is the text it received (its fast path, scheme.ts).
   */
  eventsJson: Buffer;
  chain: ChainRecord | null;
  path: PathStep[];
}

/** Folds a path from a user root: the root it leads to. */
function foldPath(userRoot: string, path: readonly PathStep[]): string {
  let acc = userRootLeaf(userRoot);
  for (const step of path) {
    const sibling = Buffer.from(step.hash, 'hex');
    acc = step.side === 'left' ? nodeHash(sibling, acc) : nodeHash(acc, sibling);
  }
  return acc.toString('hex');
}

const HASH = /^[0-9a-f]{64}$/;

/**
 * What in the chain's record the contract does not allow (roots are 64 lower-case hex characters,
 * counts are non-negative integers), or null when it is well formed. Such a record proves nothing:
 * the proof is a `mismatch` with reason `record`, never an error of the route.
 */
export function recordProblem(row: RecordedUserBatch, members: ReadonlyArray<{ party: string; root: string }> = []): string | null {
  if (!HASH.test(row.root)) return 'the user root is not 64 lower-case hex characters';
  if (!HASH.test(row.prevRoot)) return 'the previous user root is not 64 lower-case hex characters';
  if (!Number.isSafeInteger(row.eventCount) || row.eventCount < 0) return 'the event count is not a non-negative integer';
  if (row.manifestRoot !== null && !HASH.test(row.manifestRoot)) return 'the manifest root is not 64 lower-case hex characters';
  const bad = members.find((m) => !HASH.test(m.root));
  if (bad) return `the user root of ${bad.party} under the same manifest is not 64 lower-case hex characters`;
  return null;
}

/** The chain's record of a batch with its manifest and claim (one round trip): what a proof starts from. */
export function readRecord(sql: Sql, party: string, userSeq: number): Promise<RecordedUserBatch | null> {
  return recordedUserBatch(sql, party, userSeq);
}

/** The chain's records of a party's user batches after userSeq `since`, ascending, at most `limit` (one round trip). */
export function readRecords(sql: Sql, party: string, since: number, limit: number): Promise<RecordedUserBatch[]> {
  return recordedUserBatches(sql, party, since, limit);
}

/**
 * Everything of a record a proof depends on besides the events: the chain's user batch, its
 * manifest root, and the seq of the engine's claim (null for a batch the chain has not put under a
 * manifest: such a proof is not final).
 */
export function recordIdentity(row: RecordedUserBatch | null): string | null {
  if (!row || row.manifestRoot === null || row.batchNum === null || row.claimSeq === null) return null;
  return [row.root, row.prevRoot, row.eventCount, row.batchNum, row.txId, String(row.committedAt), row.manifestRoot, row.claimSeq].join('|');
}

/**
 * The proof, or null when neither the chain nor the engine's claims know this batch. `record`: the
 * chain's record already read by readRecord (undefined: read here).
 */
export async function buildProof(sql: Sql, party: string, userSeq: number, record?: RecordedUserBatch | null): Promise<UserBatchProof | null> {
  const row = record === undefined ? await recordedUserBatch(sql, party, userSeq) : record;
  // Not on chain, or the mirror lacks the claim where expected: look the claim up by its number.
  const claimSeq = row?.claimSeq ?? (await userClaim(sql, party, userSeq, null))?.seq ?? null;
  if (!row && claimSeq === null) return null;
  const manifestNum = row?.manifestRoot != null ? row.batchNum : null;
  const [events, members] = await Promise.all([
    claimSeq !== null ? batchEventRows(sql, party, claimSeq) : Promise.resolve([]),
    manifestNum !== null ? manifestMembers(sql, manifestNum) : Promise.resolve([]),
  ]);
  return assembleProof(party, userSeq, row, claimSeq, events, members);
}

/** What the proofs of some records are made of, all read: each record with its claim's seq, its events and its manifest's user roots. */
export interface ProofInputs {
  party: string;
  /** `events`: the batch's event rows as read (raw, canonical-event.ts's columns). */
  batches: Array<{ row: RecordedUserBatch; claimSeq: number | null; events: RawRow[]; members: ReadonlyArray<{ party: string; root: string }> }>;
}

/**
 * What the proofs of the chain's user batches `records` (one party's, as recordedUserBatches reads
 * them) are made of, in two more reads whatever their number: every manifest's user roots, and the
 * events of every batch as one span split at the party's claims. No hashing: assembleProofs makes
 * the proofs after the reads, outside the database's deadline.
 */
export async function readProofInputs(sql: Sql, party: string, records: readonly RecordedUserBatch[]): Promise<ProofInputs> {
  const claims = records.map((r) => r.claimSeq ?? null);
  const manifests = [...new Set(records.filter((r) => r.manifestRoot !== null && r.batchNum !== null).map((r) => r.batchNum!))];
  const [events, members] = await Promise.all([
    batchesEventRows(sql, party, claims.filter((c): c is number => c !== null)),
    manifestsMembers(sql, manifests),
  ]);
  const batches = await Promise.all(
    records.map(async (row) => {
      // A batch whose claim the mirror lacks where expected is looked up as buildProof does.
      const claimSeq = row.claimSeq ?? (await userClaim(sql, party, row.userSeq, null))?.seq ?? null;
      const own = claimSeq === null ? [] : (row.claimSeq !== null ? events.get(claimSeq) : undefined) ?? (await batchEventRows(sql, party, claimSeq));
      const manifestNum = row.manifestRoot !== null ? row.batchNum : null;
      return { row, claimSeq, events: own, members: manifestNum !== null ? (members.get(manifestNum) ?? []) : [] };
    }),
  );
  return { party, batches };
}

/** The proofs of what readProofInputs read, in its order: each the one buildProof makes. */
export function assembleProofs({ party, batches }: ProofInputs): UserBatchProof[] {
  return batches.map((b) => assembleProof(party, b.row.userSeq, b.row, b.claimSeq, b.events, b.members));
}

/** The proof from what was read: the chain's record, the claim's seq, the batch's events and the manifest's user roots. */
function assembleProof(
  party: string,
  userSeq: number,
  row: RecordedUserBatch | null,
  claimSeq: number | null,
  events: readonly RawRow[],
  members: ReadonlyArray<{ party: string; root: string }>,
): UserBatchProof {
  const manifestNum = row?.manifestRoot != null ? row.batchNum : null;
  const chain: ChainRecord | null = row
    ? {
        userRoot: row.root,
        prevRoot: row.prevRoot,
        eventCount: row.eventCount,
        batchNum: row.batchNum,
        txId: row.txId,
        committedAt: row.committedAt,
        manifestRoot: row.manifestRoot,
      }
    : null;
  let path: PathStep[] = [];
  if (manifestNum !== null) {
    const ordered = [...members].sort((a, b) => byParty(a.party, b.party));
    const index = ordered.findIndex((m) => m.party === party);
    if (index >= 0) path = manifestPath(ordered.map((m) => m.root), index);
  }
  const texts = canonicalEvents(events);
  const problem = row ? recordProblem(row, members) : null;
  const eventCount = texts.count;
  const complete = chain !== null && manifestNum !== null && chain.manifestRoot !== null;
  // The leaves are hashed in place before the texts are joined for the answer.
  const eventsMatch = problem === null && complete && claimSeq !== null && eventCount === chain.eventCount && rootOf(leavesOf(texts)) === chain.userRoot;
  const base = { party, userSeq, eventCount, eventsJson: texts.joined(), chain, path };
  if (problem !== null) return { ...base, path: [], status: 'mismatch', reason: 'record', problem };
  if (!complete) return { ...base, status: 'pending' };
  if (!eventsMatch) return { ...base, status: 'mismatch', reason: 'events' };
  if (foldPath(chain!.userRoot, path) !== chain!.manifestRoot) return { ...base, status: 'mismatch', reason: 'manifest' };
  return { ...base, status: 'verified' };
}

/**
 * The answer's bytes: `serialize` (the response schema's serializer) writes everything but the
 * events, which are each event's canonical JSON as it is (`eventTexts`): the same envelope, its
 * members in sorted order, never parsed again nor re-serialised. Both proof routes write through here.
 */
export function writeProof(proof: UserBatchProof, serialize: (proof: UserBatchProof & { events: [] }) => string): Buffer {
  const head = serialize({ ...proof, events: [] });
  // The first `"events":[` is the member: only party (a checked pattern), userSeq, status, reason
  // and problem (the gateway's own words) come before it.
  const at = head.indexOf(EVENTS) + EVENTS.length;
  if (at < EVENTS.length || head[at] !== ']') throw new Error('the proof serializer wrote no empty events member');
  return Buffer.concat([Buffer.from(head.slice(0, at), 'utf8'), proof.eventsJson, Buffer.from(head.slice(at), 'utf8')]);
}

const EVENTS = '"events":[';

/** The leaves of the events, each sha256(0x00 ‖ its canonical JSON), hashed where the texts lie. */
function leavesOf(texts: CanonicalEvents): Buffer[] {
  const leaves = new Array<Buffer>(texts.count);
  for (let i = 0; i < texts.count; i++) leaves[i] = leafOfInput(texts.leafInput(i));
  return leaves;
}
