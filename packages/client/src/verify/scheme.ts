// The commitment scheme's pure half (docs/verification.md): what is hashed and in which tree shape,
// with no hashing here. The client verifies with WebCrypto on top of it; the gateway recomputes
// with node:crypto on top of it. Plain ES2022 without any import, so browsers and Node load it alike.

/** The root of no leaves, and the `prevRoot` of a first batch. */
export const ZERO_ROOT = '0'.repeat(64);

/** The commitment events themselves: never inside a user batch. */
export const COMMITMENT_KINDS: ReadonlySet<string> = new Set(['engine.user_batch_committed', 'outbound.batch_committed']);

/** An engine event envelope as the stream carries it. */
export interface CommittedEvent {
  seq: number;
  kind: string;
  ts: string;
  market?: string;
  party?: string;
  payload: Record<string, unknown>;
}

/**
 * Canonical JSON: object members sorted by key (UTF-16 code units, the default sort), members whose
 * value is undefined left out, arrays in order, no whitespace, strings as JSON.stringify writes
 * them, numbers (only integers occur) in their shortest form.
 */
export function canonicalJson(value: unknown): string {
  // Fast path: when every object already lists its members in sorted order (an engine that writes
  // sorted keys, as the reference engine does), the native JSON.stringify writes the same text.
  if (isSortedShape(value)) return JSON.stringify(value);
  // Otherwise (the members in another order, as PostgreSQL's jsonb keeps them): the native writer
  // with the sorted list of every key in the value as its replacer, which writes each object's
  // members in that list's order (ECMA-262 SerializeJSONObject) and leaves out the absent ones.
  const keys = new Set<string>();
  if (value !== undefined && collectKeys(value, keys)) return JSON.stringify(value, [...keys].sort());
  return canonicalSlow(value);
}

const own = Object.prototype.hasOwnProperty;

/**
 * Every key of every object in a plain JSON value into `keys`; false when the value is not plain
 * JSON (another prototype, a function, NaN…) or has a key an object inherits (`__proto__`,
 * `toString`…), which a replacer list would read through every object that lacks it.
 */
function collectKeys(v: unknown, keys: Set<string>): boolean {
  if (v === undefined) return true;
  const shape = shapeOf(v);
  if (shape !== 'array' && shape !== 'object') return shape === 'scalar';
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!collectKeys(v[i], keys)) return false;
    return true;
  }
  for (const k in v as object) {
    if (!keys.has(k)) {
      if (k === '__proto__' || own.call(Object.prototype, k)) return false;
      keys.add(k);
    }
    if (!collectKeys((v as Record<string, unknown>)[k], keys)) return false;
  }
  return true;
}

/** What a value is to the writers: a plain JSON scalar (or null), an array, a plain object, or other. */
function shapeOf(v: unknown): 'scalar' | 'array' | 'object' | 'other' {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return 'scalar';
    case 'number':
      return Number.isFinite(v) ? 'scalar' : 'other';
    case 'object': {
      if (v === null) return 'scalar';
      if (Array.isArray(v)) return 'array';
      const proto = Object.getPrototypeOf(v) as unknown;
      return proto === Object.prototype || proto === null ? 'object' : 'other';
    }
    default:
      return 'other';
  }
}

/** Plain JSON values only, every object's keys in sorted order, no undefined, no NaN/Infinity. */
function isSortedShape(v: unknown): boolean {
  const shape = shapeOf(v);
  if (shape !== 'array' && shape !== 'object') return shape === 'scalar';
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!isSortedShape(v[i])) return false;
    return true;
  }
  let prev: string | undefined;
  for (const k in v as object) {
    if (prev !== undefined && !(prev < k)) return false;
    if (!isSortedShape((v as Record<string, unknown>)[k])) return false;
    prev = k;
  }
  return true;
}

/** The general writer: sorts every object's keys. */
function canonicalSlow(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('canonical JSON has no NaN or Infinity');
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw new TypeError(`canonical JSON cannot hold a ${typeof value}`);
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalSlow(value[i] === undefined ? null : value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).sort();
  let out = '{';
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${canonicalSlow(v)}`;
  }
  return `${out}}`;
}

/**
 * The text of an event's leaf: the canonical JSON of its envelope `{seq, kind, ts, market?, party?,
 * payload}` and nothing else (a null or absent market/party is left out, as on the stream).
 */
export function leafText(event: CommittedEvent): string {
  // An envelope parsed from the wire usually has exactly these members, already in sorted order:
  // it is then serialised as it is, without a copy.
  if (isEnvelopeOnly(event)) return canonicalJson(event);
  const envelope: Record<string, unknown> = { kind: event.kind };
  if (event.market !== undefined && event.market !== null) envelope.market = event.market;
  if (event.party !== undefined && event.party !== null) envelope.party = event.party;
  envelope.payload = event.payload;
  envelope.seq = event.seq;
  envelope.ts = event.ts;
  return canonicalJson(envelope);
}

const ENVELOPE_KEYS = ['kind', 'market', 'party', 'payload', 'seq', 'ts'];

/** The object's own members are a sorted subset of the envelope's, with no null market/party. */
function isEnvelopeOnly(event: CommittedEvent): boolean {
  let k = 0;
  for (const key in event) {
    while (k < ENVELOPE_KEYS.length && ENVELOPE_KEYS[k] !== key) k++;
    if (k === ENVELOPE_KEYS.length) return false;
    k++;
  }
  return event.market !== null && event.party !== null;
}

/**
 * The parties whose user batch holds this event: its `party`; for a fill (no `party`) every party
 * with a leg, once each however many legs it has; none for the commitment events.
 */
export function holdersOf(event: CommittedEvent): string[] {
  if (COMMITMENT_KINDS.has(event.kind)) return [];
  if (typeof event.party === 'string') return [event.party];
  if (event.kind !== 'engine.order_filled') return [];
  const legs = event.payload.legs;
  if (!Array.isArray(legs)) return [];
  const out: string[] = [];
  for (const leg of legs as Array<{ party?: unknown } | null>) {
    const p = leg?.party;
    if (typeof p === 'string' && !out.includes(p)) out.push(p);
  }
  return out;
}

/** Does this event belong in `party`'s user batch? */
export function heldBy(event: CommittedEvent, party: string): boolean {
  return holdersOf(event).includes(party);
}

/** One step of a path: the sibling's hash and the side it sits on. */
export interface PathStep<H = string> {
  side: 'left' | 'right';
  hash: H;
}

/**
 * The tree shape with any node function: neighbours pair level by level from the left; an
 * unpaired last node moves up a level unchanged (no duplication, no padding). Returns the root,
 * or `empty` for no leaves.
 */
export function treeRoot<H>(leaves: readonly H[], node: (left: H, right: H) => H, empty: H): H {
  if (leaves.length === 0) return empty;
  let level = leaves.slice();
  while (level.length > 1) {
    const up: H[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) up.push(node(level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) up.push(level[level.length - 1]!);
    level = up;
  }
  return level[0]!;
}

/**
 * The siblings from leaf `index` up to the root, in that tree shape. A level where the node is the
 * unpaired last one contributes no step (it moves up as it is).
 */
export function siblingPath<H>(leaves: readonly H[], index: number, node: (left: H, right: H) => H): PathStep<H>[] {
  if (!Number.isInteger(index) || index < 0 || index >= leaves.length) throw new RangeError(`leaf ${index} of ${leaves.length}`);
  const path: PathStep<H>[] = [];
  let level = leaves.slice();
  let i = index;
  while (level.length > 1) {
    if (i % 2 === 1) path.push({ side: 'left', hash: level[i - 1]! });
    else if (i + 1 < level.length) path.push({ side: 'right', hash: level[i + 1]! });
    const up: H[] = [];
    for (let j = 0; j + 1 < level.length; j += 2) up.push(node(level[j]!, level[j + 1]!));
    if (level.length % 2 === 1) up.push(level[level.length - 1]!);
    level = up;
    i = Math.floor(i / 2);
  }
  return path;
}

/** Orders parties (or anything keyed by one) as the manifest does: by UTF-16 code units. */
export function byParty(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const HEX = /^[0-9a-f]{64}$/;

/** A root or hash as the scheme writes it: 64 lower-case hex characters. */
export function isHash(value: unknown): value is string {
  return typeof value === 'string' && HEX.test(value);
}
