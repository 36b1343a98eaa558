// An auditor's verifier of the commitment scheme (docs/verification.md), written from the scheme's
// text alone: it imports nothing from the gateway, the client or the reference engine, so a test
// that compares its roots with theirs is not comparing one implementation with itself.
//
// Input: the engine envelopes `{seq, kind, ts, market?, party?, payload}` of a whole history (for
// example every page of GET /v1/events). Output: the user batches and manifests those events must
// have produced, with the roots recomputed from the events (never copied from the claims).
import { createHash } from 'node:crypto';

export interface Envelope {
  seq: number;
  kind: string;
  ts: string;
  market?: string;
  party?: string;
  payload: Record<string, unknown>;
}

export interface AuditedUserBatch {
  party: string;
  userSeq: number;
  root: string;
  prevRoot: string;
  eventCount: number;
  seqs: number[];
}

export interface AuditedManifest {
  batchNum: number;
  root: string;
  prevRoot: string;
  userBatchCount: number;
  firstSeq: number;
  lastSeq: number;
}

const ZEROS = '0'.repeat(64);
const USER_CLAIM = 'engine.user_batch_committed';
const MANIFEST_CLAIM = 'outbound.batch_committed';

/** Keys sorted by UTF-16 code units (the default sort), absent members dropped, integers plain. */
export function canonical(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object') {
    const members: string[] = [];
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) members.push(`${JSON.stringify(key)}:${canonical(v)}`);
    }
    return `{${members.join(',')}}`;
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`only integers occur in events, got ${value}`);
    return String(value);
  }
  return JSON.stringify(value);
}

function sha(...parts: Buffer[]): Buffer {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
}

export function leafOf(bytes: Buffer): Buffer {
  return sha(Buffer.from([0]), bytes);
}

/** Pairs neighbours level by level; a last node without a partner is carried up as it is. */
export function treeRoot(leaves: Buffer[]): string {
  if (leaves.length === 0) return ZEROS;
  let level = leaves;
  while (level.length > 1) {
    const up: Buffer[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) up.push(sha(Buffer.from([1]), level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) up.push(level[level.length - 1]!);
    level = up;
  }
  return level[0]!.toString('hex');
}

function envelopeOf(e: Envelope): Record<string, unknown> {
  const out: Record<string, unknown> = { seq: e.seq, kind: e.kind, ts: e.ts, payload: e.payload };
  if (e.market !== undefined && e.market !== null) out.market = e.market;
  if (e.party !== undefined && e.party !== null) out.party = e.party;
  return out;
}

/** Who holds an event in their batch: its party, or for a fill each party with a leg, once. */
function holders(e: Envelope): string[] {
  if (e.kind === USER_CLAIM || e.kind === MANIFEST_CLAIM) return [];
  if (e.party) return [e.party];
  if (e.kind !== 'engine.order_filled') return [];
  const legs = (e.payload.legs ?? []) as Array<{ party: string }>;
  return [...new Set(legs.map((l) => l.party))];
}

/**
 * Replays the history: each party collects its events until its `engine.user_batch_committed`,
 * which closes its batch; each `outbound.batch_committed` closes a manifest over the user batches
 * closed since the previous one, ordered by party.
 */
export function audit(events: Envelope[]): { userBatches: AuditedUserBatch[]; manifests: AuditedManifest[] } {
  const open = new Map<string, { leaves: Buffer[]; seqs: number[] }>();
  const last = new Map<string, { userSeq: number; root: string }>();
  const userBatches: AuditedUserBatch[] = [];
  const manifests: AuditedManifest[] = [];
  let sinceManifest: AuditedUserBatch[] = [];
  let prevManifest = ZEROS;
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  for (const e of sorted) {
    if (e.kind === USER_CLAIM) {
      const party = e.party!;
      const batch = open.get(party) ?? { leaves: [], seqs: [] };
      open.delete(party);
      const before = last.get(party);
      const audited: AuditedUserBatch = {
        party,
        userSeq: (before?.userSeq ?? 0) + 1,
        root: treeRoot(batch.leaves),
        prevRoot: before?.root ?? ZEROS,
        eventCount: batch.leaves.length,
        seqs: batch.seqs,
      };
      last.set(party, { userSeq: audited.userSeq, root: audited.root });
      userBatches.push(audited);
      sinceManifest.push(audited);
      continue;
    }
    if (e.kind === MANIFEST_CLAIM) {
      const members = [...sinceManifest].sort((a, b) => (a.party < b.party ? -1 : a.party > b.party ? 1 : 0));
      const root = treeRoot(members.map((m) => leafOf(Buffer.from(m.root, 'hex'))));
      const seqs = members.flatMap((m) => m.seqs);
      manifests.push({
        batchNum: manifests.length + 1,
        root,
        prevRoot: prevManifest,
        userBatchCount: members.length,
        firstSeq: Math.min(...seqs),
        lastSeq: Math.max(...seqs),
      });
      prevManifest = root;
      sinceManifest = [];
      continue;
    }
    const parties = holders(e);
    if (parties.length === 0) continue;
    const leaf = leafOf(Buffer.from(canonical(envelopeOf(e)), 'utf8'));
    for (const p of parties) {
      const batch = open.get(p) ?? { leaves: [], seqs: [] };
      batch.leaves.push(leaf);
      batch.seqs.push(e.seq);
      open.set(p, batch);
    }
  }
  return { userBatches, manifests };
}
