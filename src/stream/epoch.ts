// The stream's epoch: the identity of the engine history being streamed (an engine restarted with
// a new history starts a new epoch). Replicas behind a load balancer must agree on it, since a
// client may resume on another replica, so it is derived from the history itself: a short hash of
// the history's first event (seq 1). Any two gateways that follow the same history compute the
// same string; a replaced history (whose seq 1 differs in kind, ts or payload) gives another.
import { createHash, randomUUID } from 'node:crypto';
import type { EngineEvent } from '../contracts/engine-event.js';
import { eventFingerprint } from '../engine/fingerprint.js';

/** The epoch of a history that has no event yet (it changes, once, when seq 1 arrives). */
export const EMPTY_EPOCH = 'empty';

/** Marks the fallback epoch of a process that could read seq 1 from nowhere (not shared by replicas). */
export const LOCAL_EPOCH_PREFIX = 'local-';

/** The epoch of the history whose first event (seq 1) is `first`: 16 base64url characters. */
export function epochOf(first: EngineEvent): string {
  return createHash('sha256').update(eventFingerprint(first)).digest('base64url').slice(0, 16);
}

/** The fallback epoch: this process alone uses it, so a resume on another replica is reset (safe, never silent). */
export function localEpoch(): string {
  return LOCAL_EPOCH_PREFIX + createHash('sha256').update(`${process.pid}|${randomUUID()}`).digest('base64url').slice(0, 10);
}

export interface EpochSources {
  /** The history's newest seq (engine /healthz maxSeq): 0 means an empty history. null when unknown. */
  engineHead(): Promise<number | null>;
  /** Seq 1 as the engine's SSE replays it (since=0); null when the engine does not have it (410) or cannot answer. */
  engineFirst(): Promise<EngineEvent | null>;
  /** Seq 1 from the database's `events` table; null without a database or without that row. */
  storeFirst(): Promise<EngineEvent | null>;
}

/**
 * Seq 1 is read from the database's `events` table when it has it (no request to the engine), else
 * from the engine's SSE (`since=0`); an empty history (engine head 0) is EMPTY_EPOCH; when neither
 * can give seq 1 (no database row, engine retention past it or engine unreachable), a
 * process-local fallback. A database still holding a replaced history is caught by the bridge (its
 * resume point's event differs from the engine's), which derives the epoch again from the engine.
 */
export async function resolveEpoch(s: EpochSources): Promise<{ epoch: string; source: 'engine' | 'database' | 'empty' | 'local' }> {
  const stored = await s.storeFirst().catch(() => null);
  if (stored && stored.seq === 1) return { epoch: epochOf(stored), source: 'database' };
  const head = await s.engineHead().catch(() => null);
  if (head === 0) return { epoch: EMPTY_EPOCH, source: 'empty' };
  if (head !== null) {
    const first = await s.engineFirst().catch(() => null);
    if (first && first.seq === 1) return { epoch: epochOf(first), source: 'engine' };
  }
  return { epoch: localEpoch(), source: 'local' };
}
