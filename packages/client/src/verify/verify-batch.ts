// verifyUserBatch(proof): the client's own check of one user batch (docs/verification.md), trusting
// nothing the gateway computed: the user root is recomputed from the events, the path folded up to
// the manifest root, and each is compared with what the chain recorded (`proof.chain`). The
// gateway's `status` is only reported alongside. Hashing is synchronous SHA-256 (WebAssembly once
// loaded, else plain JavaScript), each leaf and node in place in one buffer (sha256-sync.ts, ADR 0300,
// ADR 0370): a history is about two hashes of a few hundred bytes per event, where WebCrypto's cost
// was its per-call hop, not the bytes (ADR 0064).
import type { UserBatchProof } from '../generated/wire.js';
import { heldBy, isHash, leafText, type CommittedEvent } from './scheme.js';
import { fromHex, toHex } from './hex.js';
import { leavesOf, loadSha256, nodeSync, rootLeaf, treeRootOf } from './sha256-sync.js';

/** The step of the check that failed. */
export type VerifyStep =
  /** The proof is malformed (not an object, a field of the wrong type, a hash that is not 64 hex). */
  | 'shape'
  /** An event is not the party's, is a commitment event, or the seqs are not strictly increasing. */
  | 'events'
  /** The number of events differs from the chain's eventCount. */
  | 'eventCount'
  /** The events do not hash to the chain's user root. */
  | 'userRoot'
  /** The user root and the path do not fold to the chain's manifest root. */
  | 'manifest';

export type BatchVerdict =
  | {
      status: 'verified';
      party: string;
      userSeq: number;
      userRoot: string;
      manifestRoot: string;
      batchNum: number | null;
      txId: string | null;
      committedAt: string | null;
      eventCount: number;
      /** What the gateway said: a disagreement with it is worth reporting. */
      gatewayStatus: string;
    }
  | { status: 'pending'; party: string; userSeq: number; eventCount: number; gatewayStatus: string }
  | {
      status: 'failed';
      party: string;
      userSeq: number;
      step: VerifyStep;
      message: string;
      expected?: string;
      actual?: string;
      gatewayStatus: string;
    };

const ZERO = '0'.repeat(64);

/** The user root (hex) of a batch's events, in the order given. */
function userRootHex(events: readonly CommittedEvent[]): string {
  const root = treeRootOf(leavesOf(events.map(leafText)), events.length);
  return root ? toHex(root) : ZERO;
}

/** The manifest root (hex) a path folds to from a user root. */
function foldPathHex(userRoot: string, path: ReadonlyArray<{ side: string; hash: string }>): string {
  let acc = rootLeaf(fromHex(userRoot));
  for (const step of path) {
    const sibling = fromHex(step.hash);
    acc = step.side === 'left' ? nodeSync(sibling, acc) : nodeSync(acc, sibling);
  }
  return toHex(acc);
}

/** The user root (hex) of a batch's events, in the order given. */
export async function userRootOf(events: readonly CommittedEvent[]): Promise<string> {
  await loadSha256();
  return userRootHex(events);
}

/** Folds a path from a user root: the manifest root it leads to (hex). */
export async function foldPath(userRoot: string, path: ReadonlyArray<{ side: string; hash: string }>): Promise<string> {
  await loadSha256();
  return foldPathHex(userRoot, path);
}

function shapeError(proof: unknown): string | null {
  if (typeof proof !== 'object' || proof === null) return 'the proof is not an object';
  const p = proof as Partial<UserBatchProof>;
  if (typeof p.party !== 'string' || !Number.isSafeInteger(p.userSeq)) return 'party or userSeq missing';
  if (!Array.isArray(p.events) || !Array.isArray(p.path)) return 'events or path is not an array';
  for (const e of p.events) {
    if (typeof e !== 'object' || e === null || !Number.isSafeInteger(e.seq) || typeof e.kind !== 'string' || typeof e.ts !== 'string' || typeof e.payload !== 'object' || e.payload === null) {
      return 'an event is not an envelope {seq, kind, ts, payload}';
    }
  }
  for (const s of p.path) if ((s?.side !== 'left' && s?.side !== 'right') || !isHash(s.hash)) return 'a path step is not {side: left|right, hash}';
  if (p.chain !== null && p.chain !== undefined) {
    if (!isHash(p.chain.userRoot)) return 'chain.userRoot is not a hash';
    if (p.chain.manifestRoot !== null && !isHash(p.chain.manifestRoot)) return 'chain.manifestRoot is not a hash';
  }
  return null;
}

/**
 * Verifies one proof. `verified` only when the events are the party's, hash to the chain's user
 * root, and that root folds with the path to the chain's manifest root; `pending` when the chain
 * has no manifest for it yet (the events are still checked for shape); otherwise `failed` with the
 * first step that failed.
 */
export async function verifyUserBatch(proof: UserBatchProof): Promise<BatchVerdict> {
  await loadSha256();
  return checkUserBatch(proof, null);
}

/**
 * verifyUserBatch at once, with whichever SHA-256 is loaded (the same results, slower before the
 * WebAssembly one is), and with the leaves of `proof.events` already hashed from the bytes they
 * arrived as (page-scan.ts, ADR 0370), 32 bytes each, or null. Their root is used when it is the
 * chain's; when it is not, the events' canonical form is hashed and judged as verifyUserBatch
 * judges it, so the verdict is the same either way. verifyHistory checks each proof of a page as
 * soon as it is parsed, so that nothing of it is kept past its check (ADR 0386).
 */
export function checkUserBatch(proof: UserBatchProof, leaves: Uint8Array | null): BatchVerdict {
  const party = typeof proof?.party === 'string' ? proof.party : '';
  const userSeq = typeof proof?.userSeq === 'number' ? proof.userSeq : 0;
  const gatewayStatus = typeof proof?.status === 'string' ? proof.status : 'unknown';
  const fail = (step: VerifyStep, message: string, expected?: string, actual?: string): BatchVerdict => ({
    status: 'failed',
    party,
    userSeq,
    step,
    message,
    ...(expected !== undefined ? { expected } : {}),
    ...(actual !== undefined ? { actual } : {}),
    gatewayStatus,
  });
  const malformed = shapeError(proof);
  if (malformed) return fail('shape', malformed);
  const events = proof.events as CommittedEvent[];
  let last = 0;
  for (const e of events) {
    if (e.seq <= last) return fail('events', `event seqs are not strictly increasing at seq ${e.seq}`);
    last = e.seq;
    if (!heldBy(e, party)) return fail('events', `event ${e.seq} (${e.kind}) is not in ${party}'s batches`);
  }
  const chain = proof.chain;
  if (!chain || chain.manifestRoot === null) return { status: 'pending', party, userSeq, eventCount: events.length, gatewayStatus };
  if (events.length !== chain.eventCount) return fail('eventCount', `${events.length} events, the chain recorded ${chain.eventCount}`, String(chain.eventCount), String(events.length));
  const fromBytes = leaves !== null && leaves.length === 32 * events.length ? treeRootOf(leaves.slice(), events.length) : null;
  const userRoot = fromBytes !== null && toHex(fromBytes) === chain.userRoot ? chain.userRoot : userRootHex(events);
  if (userRoot !== chain.userRoot) return fail('userRoot', "the events do not hash to the chain's user root", chain.userRoot, userRoot);
  const manifestRoot = foldPathHex(userRoot, proof.path);
  if (manifestRoot !== chain.manifestRoot) return fail('manifest', "the user root is not under the chain's manifest root", chain.manifestRoot, manifestRoot);
  return {
    status: 'verified',
    party,
    userSeq,
    userRoot,
    manifestRoot,
    batchNum: chain.batchNum,
    txId: chain.txId,
    committedAt: chain.committedAt,
    eventCount: events.length,
    gatewayStatus,
  };
}
