/**
 * Commitments: per-party merkle roots over user-scoped events, chained per party, and a global
 * manifest root over the user roots of one batch. Exported so an indexer can recompute them.
 *
 *   canonical JSON: object keys sorted (by UTF-16 code unit), no whitespace, arrays in order.
 *   leaf hash     : sha256(0x00 ‖ utf8(canonicalJson(event envelope)))
 *   node hash     : sha256(0x01 ‖ left ‖ right)
 *   tree          : pair neighbours level by level; an unpaired last node moves up unchanged.
 *   empty tree    : 64 zeros.
 *   user root     : merkleRoot(leaf hashes of that party's new events, in seq order): the events
 *                   whose `party` is the party, and the engine.order_filled events in which it has
 *                   a leg (each once, however many legs it has in it)
 *   batch root    : merkleRoot(leaves = sha256(0x00 ‖ 32 raw bytes of each user root)),
 *                   in the order of the batch's engine.user_batch_committed events.
 */
import { createHash, hash } from 'node:crypto';
import type { EngineEvent } from './types.js';

export const ZERO_ROOT = '0'.repeat(64);
const LEAF_PREFIX = Buffer.from([0]);
const NODE_PREFIX = Buffer.from([1]);

export function canonicalJson(value: unknown): string {
  // Fast path: a tree whose objects already list their keys in sorted order serializes canonically
  // with the native JSON.stringify. The engine builds its events that way; anything else takes the
  // general path below.
  if (isCanonicalShape(value)) return JSON.stringify(value) ?? 'null';
  return canonicalJsonSlow(value);
}

/** True when every object in the tree is plain, has no undefined members, and lists keys sorted. */
export function isCanonicalShape(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return typeof v !== 'bigint' && typeof v !== 'function' && typeof v !== 'symbol';
  if (Array.isArray(v)) {
    for (const x of v) if (!isCanonicalShape(x)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  let prev: string | undefined;
  for (const k in v) {
    if (prev !== undefined && !(prev < k)) return false;
    const x = (v as Record<string, unknown>)[k];
    if (x === undefined || !isCanonicalShape(x)) return false;
    prev = k;
  }
  return true;
}

/** Deep copy with every object's keys in sorted order (so it takes the fast path above). */
export function sortKeysDeep(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(sortKeysDeep);
  const obj = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj).sort()) out[k] = sortKeysDeep(obj[k]);
  return out;
}

/** The general canonical JSON writer (reference implementation). */
export function canonicalJsonSlow(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('bigint is not JSON');
    case 'object':
      break;
    default:
      return 'null';
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJsonSlow(value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${canonicalJsonSlow(v)}`;
    first = false;
  }
  return `${out}}`;
}

export function leafHash(data: Buffer | string): Buffer {
  if (typeof data === 'string') return hash('sha256', `\u0000${data}`, 'buffer');
  return createHash('sha256').update(LEAF_PREFIX).update(data).digest();
}

/** Scratch input of nodeHash (0x01 ‖ left ‖ right); hashing copies it synchronously. */
const NODE_INPUT = Buffer.alloc(65);

export function nodeHash(left: Buffer, right: Buffer): Buffer {
  if (left.length !== 32 || right.length !== 32) {
    return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
  }
  // One-shot hash of a reused buffer: ~1.6 µs instead of ~2.4 µs for a Hash object and three updates.
  NODE_INPUT[0] = 1;
  left.copy(NODE_INPUT, 1);
  right.copy(NODE_INPUT, 33);
  return hash('sha256', NODE_INPUT, 'buffer');
}

/** Merkle root (hex) of already-hashed leaves. */
export function merkleRoot(leaves: Buffer[]): string {
  if (leaves.length === 0) return ZERO_ROOT;
  let level = leaves;
  while (level.length > 1) {
    const next: Buffer[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const l = level[i]!;
      const r = level[i + 1];
      next.push(r === undefined ? l : nodeHash(l, r));
    }
    level = next;
  }
  return level[0]!.toString('hex');
}

export function eventLeafHash(event: EngineEvent): Buffer {
  return leafHash(canonicalJson(event));
}

/** Root of one user batch: the party's new events in seq order. */
export function userBatchRoot(events: EngineEvent[]): string {
  return merkleRoot(events.map(eventLeafHash));
}

/** Root of one global batch over its user roots (hex), in commit order. */
export function batchRoot(userRoots: string[]): string {
  return merkleRoot(userRoots.map((r) => leafHash(Buffer.from(r, 'hex'))));
}

/** Kinds that never enter a user batch (commitment events themselves). */
export const UNCOMMITTED_KINDS = new Set(['engine.user_batch_committed', 'outbound.batch_committed']);

/**
 * Streaming form of merkleRoot: leaves are pushed one by one and complete subtrees are merged as
 * soon as they exist, so a commit only folds O(log n) nodes. Folding the stack right to left gives
 * exactly the level-by-level tree with unpaired nodes promoted.
 */
export class MerkleAccumulator {
  private readonly stack: Array<{ hash: Buffer; height: number }> = [];
  count = 0;

  push(leaf: Buffer): void {
    let node = { hash: leaf, height: 0 };
    let top = this.stack[this.stack.length - 1];
    while (top && top.height === node.height) {
      this.stack.pop();
      node = { hash: nodeHash(top.hash, node.hash), height: node.height + 1 };
      top = this.stack[this.stack.length - 1];
    }
    this.stack.push(node);
    this.count++;
  }

  root(): string {
    if (this.stack.length === 0) return ZERO_ROOT;
    let acc = this.stack[this.stack.length - 1]!.hash;
    for (let i = this.stack.length - 2; i >= 0; i--) acc = nodeHash(this.stack[i]!.hash, acc);
    return acc.toString('hex');
  }
}

/**
 * The parties whose user batch holds this event: its `party`, or for a fill (which has none) every
 * party with a leg in it, each once (a self-trade or a flip gives one party several legs).
 */
export function partiesOf(event: EngineEvent): string[] {
  if (event.party !== undefined) return [event.party];
  if (event.kind !== 'engine.order_filled') return [];
  const legs = (event.payload as { legs?: Array<{ party?: unknown }> }).legs;
  if (!Array.isArray(legs)) return [];
  const out: string[] = [];
  for (const leg of legs) if (typeof leg.party === 'string' && !out.includes(leg.party)) out.push(leg.party);
  return out;
}

interface PendingParty {
  acc: MerkleAccumulator;
  firstSeq: number;
  lastSeq: number;
}

/** Collects user-scoped events between commits (as leaf hashes) and keeps each party's chain. */
export class Committer {
  private pending = new Map<string, PendingParty>();
  private readonly chains = new Map<string, { userSeq: number; root: string }>();
  private batchNum = 0;
  private lastBatchRoot = ZERO_ROOT;

  /**
   * Feed every appended event; user-scoped ones are hashed now (spreading the work instead of
   * stalling at commit time). `json` is JSON.stringify(event), reused when already canonical.
   */
  observe(event: EngineEvent, json?: string): void {
    if (UNCOMMITTED_KINDS.has(event.kind)) return;
    const parties = partiesOf(event);
    if (parties.length === 0) return;
    const text = json !== undefined && isCanonicalShape(event) ? json : canonicalJson(event);
    const leaf = leafHash(text);
    for (const party of parties) {
      let p = this.pending.get(party);
      if (!p) {
        p = { acc: new MerkleAccumulator(), firstSeq: event.seq, lastSeq: event.seq };
        this.pending.set(party, p);
      }
      p.acc.push(leaf);
      p.lastSeq = event.seq;
    }
  }

  get pendingParties(): number {
    return this.pending.size;
  }

  /**
   * Take the pending work for one commit. Returns the user batches (sorted by party) and the
   * manifest, or null when no party has new events.
   */
  cut(): {
    users: Array<{ party: string; userSeq: number; root: string; prevRoot: string; eventCount: number }>;
    batch: { batchNum: number; root: string; prevRoot: string; userBatchCount: number; firstSeq: number; lastSeq: number };
  } | null {
    if (this.pending.size === 0) return null;
    const pending = this.pending;
    this.pending = new Map();
    const parties = [...pending.keys()].sort();
    let firstSeq = Number.MAX_SAFE_INTEGER;
    let lastSeq = 0;
    const users = parties.map((party) => {
      const p = pending.get(party)!;
      if (p.firstSeq < firstSeq) firstSeq = p.firstSeq;
      if (p.lastSeq > lastSeq) lastSeq = p.lastSeq;
      const prev = this.chains.get(party);
      const root = p.acc.root();
      const userSeq = (prev?.userSeq ?? 0) + 1;
      this.chains.set(party, { userSeq, root });
      return { party, userSeq, root, prevRoot: prev?.root ?? ZERO_ROOT, eventCount: p.acc.count };
    });
    const root = batchRoot(users.map((u) => u.root));
    const batch = {
      batchNum: ++this.batchNum,
      root,
      prevRoot: this.lastBatchRoot,
      userBatchCount: users.length,
      firstSeq,
      lastSeq,
    };
    this.lastBatchRoot = root;
    return { users, batch };
  }
}
