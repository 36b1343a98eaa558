// What identifies one event of one history, wherever the copy came from (the engine's SSE text, the
// database's jsonb, JetStream): the bridge compares the resume point's event with the engine's
// copy to catch a replaced history, and the stream's epoch is a hash of seq 1's fingerprint.
import { createHash } from 'node:crypto';
import type { EngineEvent } from '../contracts/engine-event.js';

/** JSON with object keys sorted at every depth: the same value gives the same text wherever it came from. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * What identifies one event of one history: seq, kind, ts (normalised to ISO with ms) and a hash of
 * the canonical payload. The engine's SSE text and the database's jsonb copy of the same event give
 * the same fingerprint (key order and time formatting do not matter).
 */
export function eventFingerprint(e: Pick<EngineEvent, 'seq' | 'kind' | 'ts' | 'payload'>): string {
  const t = Date.parse(e.ts);
  const ts = Number.isFinite(t) ? new Date(t).toISOString() : e.ts;
  const payload = createHash('sha256').update(canonicalJson(e.payload)).digest('base64url').slice(0, 22);
  return `${e.seq}|${e.kind}|${ts}|${payload}`;
}

