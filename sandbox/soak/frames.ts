// What the soak compares: frames reduced to (kind, seq, hash of their canonical JSON), so hundreds
// of thousands of them fit in a few arrays of small integers. Passthrough frames must equal the
// engine's event; a `trade` frame must equal what the engine's `engine.order_filled` says
// (derived here independently of the gateway's projection code).

export const PASSTHROUGH = [
  'engine.tick_start', 'inbound.deposit', 'inbound.withdrawal_request', 'engine.approve_submitted',
  'engine.reject_submitted', 'session.authorized', 'inbound.order', 'engine.order_placed', 'engine.order_filled',
  'engine.order_cancelled', 'engine.order_rejected', 'engine.trigger_set', 'engine.trigger_cancelled',
  'engine.trigger_fired', 'engine.attached_resolved', 'engine.user_batch_committed', 'outbound.batch_committed',
] as const;
/** Kinds compared exactly with the engine log: every passthrough kind, and `trade`. */
export const COMPARED = [...PASSTHROUGH, 'trade'] as const;
const KIND_ID = new Map<string, number>(COMPARED.map((k, i) => [k, i + 1]));
export const TRADE_ID = KIND_ID.get('trade')!;
export const kindId = (kind: string): number => KIND_ID.get(kind) ?? 0;
export const kindName = (id: number): string => COMPARED[id - 1] ?? '?';

/** JSON with object keys sorted, so two encodings of the same value compare equal. */
export function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
}

/** FNV-1a, 30 bits (stays a small integer in V8 arrays). Compared only at equal (kind, seq). */
export function hash30(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) & 0x3fffffff;
}

export interface EngineEventJson {
  seq: number;
  kind: string;
  ts: string;
  market?: string;
  party?: string;
  payload: Record<string, unknown>;
}

/** Decimal string in the stream's 10-place wire form ("0.5" → "0.5000000000"). */
export function wireDecimal(text: string): string {
  const m = /^(-?)(\d+)(?:\.(\d{1,10}))?$/.exec(text);
  if (!m) return text;
  const whole = m[2]!.replace(/^0+(?=\d)/, '');
  const frac = (m[3] ?? '').padEnd(10, '0');
  const zero = /^0*$/.test(whole + frac);
  return `${m[1] && !zero ? '-' : ''}${whole}.${frac}`;
}

/** The `trade` frame an `engine.order_filled` event must produce (docs/stream.md), or null. */
export function expectedTrade(e: EngineEventJson): Record<string, unknown> | null {
  if (e.kind !== 'engine.order_filled' || e.market === undefined) return null;
  const p = e.payload as Record<string, string>;
  return {
    kind: 'trade',
    seq: e.seq,
    ts: e.ts,
    market: e.market,
    payload: { matchId: p.matchId, side: p.takerSide, size: wireDecimal(p.size!), price: wireDecimal(p.price!), takerOrderId: p.takerOrderId, makerOrderId: p.makerOrderId },
  };
}
