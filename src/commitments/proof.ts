// The proof of one user batch (GET /v1/users/:party/user-batches/:userSeq/proof, docs/verification.md):
// the batch's events from the mirror, what the chain recorded for it and for its manifest, and the
// sibling path from the user root up to the manifest root. The gateway's `status` is a convenience;
// a client recomputes everything from `events`, `chain` and `path` (packages/client verifyUserBatch).
import type { Sql } from 'postgres';
import { byParty, type PathStep } from '../../packages/client/src/verify/scheme.js';
import type { EventEnvelope } from '../db/queries/events.js';
import { batchEvents, chainManifest, chainUserBatch, manifestMembers, userClaim } from '../db/queries/commitments.js';
import { manifestPath, userBatchRoot, userRootLeaf, nodeHash } from './hash.js';

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
  reason?: 'events' | 'manifest';
  events: EventEnvelope[];
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

/** The proof, or null when neither the chain nor the engine's claims know this batch. */
export async function buildProof(sql: Sql, party: string, userSeq: number): Promise<UserBatchProof | null> {
  const row = await chainUserBatch(sql, party, userSeq);
  const manifestNum = row?.batchNum ?? null;
  const [manifest, members] = manifestNum === null ? [null, []] : await Promise.all([chainManifest(sql, manifestNum), manifestMembers(sql, manifestNum)]);
  const claim = await userClaim(sql, party, userSeq, manifest ? manifest.lastSeq : null);
  if (!row && !claim) return null;
  const events = claim ? await batchEvents(sql, party, claim.seq) : [];
  const chain: ChainRecord | null = row
    ? {
        userRoot: row.root,
        prevRoot: row.prevRoot,
        eventCount: row.eventCount,
        batchNum: row.batchNum,
        txId: row.txId,
        committedAt: row.committedAt,
        manifestRoot: manifest?.root ?? null,
      }
    : null;
  let path: PathStep[] = [];
  if (manifest) {
    const ordered = [...members].sort((a, b) => byParty(a.party, b.party));
    const index = ordered.findIndex((m) => m.party === party);
    if (index >= 0) path = manifestPath(ordered.map((m) => m.root), index);
  }
  const base = { party, userSeq, events, chain, path };
  if (!chain || !manifest || chain.manifestRoot === null) return { ...base, status: 'pending' };
  if (!claim || events.length !== chain.eventCount || userBatchRoot(events) !== chain.userRoot) return { ...base, status: 'mismatch', reason: 'events' };
  if (foldPath(chain.userRoot, path) !== chain.manifestRoot) return { ...base, status: 'mismatch', reason: 'manifest' };
  return { ...base, status: 'verified' };
}
