// Compares every segment a stream client received with the engine's log under the client's filter:
// the passthrough frames must be the engine's events, the `trade` frames what each fill implies,
// with nothing missing, repeated, foreign or out of order.
import { idOf, type EngineHistory } from './engine-log.js';
import { COMPARED, PASSTHROUGH, TRADE_ID, kindId, kindName } from './frames.js';
import type { ClientSpec, Segment } from './stream-client.js';

export interface SegmentVerdict {
  client: string;
  why: string;
  history: number | null;
  from: number;
  to: number;
  received: number;
  expected: number;
  missing: number;
  duplicated: number;
  foreign: number;
  outOfOrder: number;
  domainProblems: string[];
  legFrames: number;
  examples: string[];
}

const PASSTHROUGH_IDS = new Set(PASSTHROUGH.map((k) => kindId(k)));
const FILLED_ID = kindId('engine.order_filled');

export function verifySegment(seg: Segment, spec: ClientSpec, histories: EngineHistory[], endHead: Map<number, number>): SegmentVerdict | null {
  const n = seg.seqs.length;
  const verdict: SegmentVerdict = { client: seg.client, why: seg.why, history: null, from: 0, to: 0, received: n, expected: 0, missing: 0, duplicated: 0, foreign: 0, outOfOrder: 0, domainProblems: [...seg.domainProblems], legFrames: 0, examples: [] };
  if (n === 0) return seg.domainProblems.length > 0 ? verdict : null;
  const matchesHistory = (h: EngineHistory, i: number): boolean => {
    const s = seg.seqs[i]!;
    return seg.kinds[i] === TRADE_ID ? h.tradeHash[s] === seg.hashes[i] : h.hash[s] === seg.hashes[i];
  };
  let history: EngineHistory | undefined;
  for (let i = 0; i < Math.min(n, 50) && !history; i++) history = histories.find((h) => matchesHistory(h, i));
  if (!history) {
    verdict.foreign = n;
    verdict.examples.push(`no engine history holds these frames (first: ${kindName(seg.kinds[0]!)} seq ${seg.seqs[0]})`);
    return verdict;
  }
  verdict.history = history.index;

  const kinds = spec.filter.kinds ? new Set(spec.filter.kinds.split(',').map(kindId)) : new Set(COMPARED.map(kindId));
  const markets = spec.filter.markets ? new Set(spec.filter.markets.split(',').map(idOf)) : null;
  const parties = new Set((spec.filter.party ?? '').split(',').filter(Boolean).map(idOf));
  const lastSeq = seg.seqs[n - 1]!;
  const lo = seg.start !== null ? seg.start + 1 : seg.seqs[0]!;
  // A segment ended by `stream.gap` owes nothing past the gap's `requestedSince` (announced
  // unavailable: backfilled from REST). Frames it received above that (the part of a cut event that
  // arrived before the cut) are still checked to be the engine's, but what is missing there is not owed.
  const hi = seg.openAtEnd ? Math.max(lastSeq, endHead.get(history.index) ?? 0) : seg.end !== null ? Math.min(lastSeq, seg.end) : lastSeq;
  const seenHi = seg.openAtEnd ? hi : lastSeq;
  verdict.from = lo;
  verdict.to = hi;

  // Expected frames, keyed kind:seq → hash.
  const expected = new Map<string, number>();
  const unowed = new Map<string, number>();
  for (let s = lo; s <= seenHi; s++) {
    const into = s <= hi ? expected : unowed;
    const k = history.kind[s];
    if (k === undefined) continue;
    const m = history.market[s]!;
    if (markets && m !== 0 && !markets.has(m)) continue;
    const p = history.party[s]!;
    if (p !== 0 && !parties.has(p)) continue;
    // With a party filter, a match reaches the connection only when one of its parties has a leg in
    // it (docs/stream.md "User channels"); the public trade frame still comes.
    const fillOfOthers = k === FILLED_ID && parties.size > 0 && !(history.legParties[s] ?? []).some((q) => parties.has(q));
    if (kinds.has(k) && PASSTHROUGH_IDS.has(k) && !fillOfOthers) into.set(`${k}:${s}`, history.hash[s]!);
    if (history.tradeHash[s] !== 0 && kinds.has(TRADE_ID)) into.set(`${TRADE_ID}:${s}`, history.tradeHash[s]!);
  }
  verdict.expected = expected.size;

  const seen = new Set<string>();
  let prevSeq = -1;
  let prevKind = 0;
  const example = (msg: string): void => void (verdict.examples.length < 6 && verdict.examples.push(msg));
  for (let i = 0; i < n; i++) {
    const k = seg.kinds[i]!;
    const s = seg.seqs[i]!;
    const key = `${k}:${s}`;
    if (s < prevSeq || (s === prevSeq && (k === TRADE_ID) < (prevKind === TRADE_ID))) {
      verdict.outOfOrder++;
      example(`${kindName(k)} seq ${s} after ${kindName(prevKind)} seq ${prevSeq}`);
    }
    prevSeq = s;
    prevKind = k;
    if (seen.has(key)) {
      verdict.duplicated++;
      example(`${kindName(k)} seq ${s} received twice`);
      continue;
    }
    seen.add(key);
    const want = expected.get(key) ?? unowed.get(key);
    if (want === undefined || want !== seg.hashes[i]) {
      verdict.foreign++;
      example(`${kindName(k)} seq ${s} is not the engine's (history ${history.index}) under the filter`);
    }
  }
  // position.update / balance.update: exactly one per leg of a subscribed party (positions: market filter too).
  const legsWanted = new Map<string, number>();
  const wantPos = !spec.filter.kinds || spec.filter.kinds.split(',').includes('position.update');
  const wantBal = !spec.filter.kinds || spec.filter.kinds.split(',').includes('balance.update');
  for (let s = lo; s <= hi; s++) {
    const legs = history.legParties[s];
    if (!legs) continue;
    const mine = legs.filter((p) => parties.has(p)).length;
    if (mine === 0) continue;
    const m = history.market[s]!;
    if (wantPos && !(markets && m !== 0 && !markets.has(m))) legsWanted.set(`1:${s}`, mine);
    if (wantBal) legsWanted.set(`2:${s}`, mine);
  }
  const legsGot = new Map<string, number>();
  for (let i = 0; i < seg.legSeqs.length; i++) {
    const s = seg.legSeqs[i]!;
    if (s < lo || s > hi) continue;
    const key = `${seg.legKinds[i]}:${s}`;
    legsGot.set(key, (legsGot.get(key) ?? 0) + 1);
  }
  for (const key of new Set([...legsWanted.keys(), ...legsGot.keys()])) {
    const want = legsWanted.get(key) ?? 0;
    const got = legsGot.get(key) ?? 0;
    if (want === got) continue;
    const [k, s] = key.split(':');
    if (verdict.domainProblems.length < 20) verdict.domainProblems.push(`${k === '1' ? 'position.update' : 'balance.update'} seq ${s}: ${got} frames for ${want} legs of the subscribed parties`);
    else verdict.domainProblems.push('…');
  }
  verdict.legFrames = seg.legSeqs.length;
  for (const key of expected.keys()) {
    if (seen.has(key)) continue;
    verdict.missing++;
    const [k, s] = key.split(':');
    example(`missing ${kindName(Number(k))} seq ${s}`);
  }
  return verdict;
}

export function failed(v: SegmentVerdict): boolean {
  return v.missing + v.duplicated + v.foreign + v.outOfOrder + v.domainProblems.length > 0;
}
