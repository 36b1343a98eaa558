// What a client may send on an open /v1/stream connection (docs/stream.md "Talking to the
// socket"): JSON text messages, each with an `op` and a client-chosen `id` echoed in the answer.
// Which ops there are, and each one's schema, is declared once per call (src/http/calls/); this
// module holds what reading them shares (the id, the signing values, the error of a message that
// cannot be read) and the reading of the two ops that are the stream's own:
//
//   subscribe    add kinds / markets / intervals / parties (with their proof) and set the book view
//   unsubscribe  remove kinds / markets / intervals / parties
//
// Each reader throws MalformedMessageError (400 `bad_request` at the edge) or
// InvalidSubscriptionError naming what is wrong. What a subscribe does to the connection's filters
// is subscription-change.ts.
import { CANDLE_INTERVALS, FRAME_KINDS } from '../contracts/frame.js';
import { MARKET_PATTERN, PARTY_PATTERN } from '../contracts/wire.js';
import { InvalidSubscriptionError } from './errors.js';
import { SIGNING_VALUE_PATTERN } from './message-schemas.js';

/** The client's id of a message: a string of 1..64 printable ASCII characters, or a safe integer. */
export type MessageId = string | number;

/** A message that cannot be read (not JSON, not an object, unknown op, a field of the wrong type). */
export class MalformedMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedMessageError';
  }
}

export interface FilterLists {
  kinds: string[] | null;
  markets: string[] | null;
  intervals: string[] | null;
  party: string[] | null;
}

export interface SubscribeMessage {
  op: 'subscribe';
  id: MessageId;
  lists: FilterLists;
  /** The party proof, exactly the URL's `user`, `sessionId`, `sig`. */
  proof: { user: string; sessionId: string; sig: string } | null;
  /** Book view of `orderbook.delta` (as the URL's `depth` and `group`); null fields: not given. */
  depth: string | null;
  group: string | null;
  /** Conflation period of the deltas (ms, as text like the URL's); null: not given. */
  throttle: string | null;
  /** false: no snapshot frames for what was added; null: the connection's own `snapshot` setting. */
  snapshot: boolean | null;
}

export interface UnsubscribeMessage {
  op: 'unsubscribe';
  id: MessageId;
  lists: FilterLists;
}

/** The signature of a signed call, as the three signing headers' values (absent ones are judged as REST judges missing headers). */
export interface MessageSignature {
  user?: string;
  sessionId?: string;
  sig?: string;
}

/** Most values one list of a message may carry (as the URL's lists). */
export const MAX_MESSAGE_LIST = 100;
const ID = /^[\x20-\x7e]{1,64}$/;
const KINDS: ReadonlySet<string> = new Set(FRAME_KINDS);
const INTERVALS: ReadonlySet<string> = new Set(CANDLE_INTERVALS);
const PARTY = new RegExp(PARTY_PATTERN);
const MARKET = new RegExp(MARKET_PATTERN);
const SIGNING_VALUE = new RegExp(SIGNING_VALUE_PATTERN);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The id of a message as far as it can be read (for the error answer of a message that is
 * otherwise wrong); null when there is none or it is not a valid id.
 */
export function messageIdOf(value: unknown): MessageId | null {
  if (!isObject(value)) return null;
  const id = value.id;
  if (typeof id === 'string' && ID.test(id)) return id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) return id;
  return null;
}

function list(message: Record<string, unknown>, name: string, ok: (v: string) => boolean, what: string): string[] | null {
  const raw = message[name];
  if (raw === undefined) return null;
  if (!Array.isArray(raw)) throw new MalformedMessageError(`"${name}" must be an array of strings`);
  if (raw.length > MAX_MESSAGE_LIST) throw new InvalidSubscriptionError(`"${name}" lists more than ${MAX_MESSAGE_LIST} values`, 'too_many');
  for (const v of raw) {
    if (typeof v !== 'string') throw new MalformedMessageError(`"${name}" must be an array of strings`);
    if (!ok(v)) throw new InvalidSubscriptionError(`"${name}": ${JSON.stringify(v.slice(0, 120))} is not ${what}`);
  }
  return [...new Set(raw as string[])];
}

function optionalString(message: Record<string, unknown>, name: string, maxLength = 1024): string | undefined {
  const v = message[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > maxLength) throw new MalformedMessageError(`"${name}" must be a string of at most ${maxLength} characters`);
  return v;
}

function lists(message: Record<string, unknown>): FilterLists {
  return {
    kinds: list(message, 'kinds', (k) => KINDS.has(k), `a frame kind (one of ${FRAME_KINDS.join(', ')})`),
    markets: list(message, 'markets', (m) => MARKET.test(m), 'a market symbol'),
    intervals: list(message, 'intervals', (i) => INTERVALS.has(i), `an interval (one of ${CANDLE_INTERVALS.join(', ')})`),
    party: list(message, 'party', (p) => p.length <= 114 && PARTY.test(p), 'a party id <hint>::<64 hex>'),
  };
}

/** A signing header's value: a string an HTTP header could carry (message-schemas.ts SIGNING_VALUE_PATTERN). */
function signingValue(message: Record<string, unknown>, name: string): string | undefined {
  const v = optionalString(message, name);
  if (v !== undefined && !SIGNING_VALUE.test(v)) throw new MalformedMessageError(`"${name}" must be printable ASCII (the value of a signing header)`);
  return v;
}

/** The signing values a message carries (each printable ASCII when present). */
export function messageSignature(message: Record<string, unknown>): MessageSignature {
  const s: MessageSignature = {};
  const user = signingValue(message, 'user');
  const sessionId = signingValue(message, 'sessionId');
  const sig = signingValue(message, 'sig');
  if (user !== undefined) s.user = user;
  if (sessionId !== undefined) s.sessionId = sessionId;
  if (sig !== undefined) s.sig = sig;
  return s;
}

/** Reads a `subscribe` message (its envelope and fields already known to be the op's). */
export function readSubscribe(value: Record<string, unknown>, id: MessageId): SubscribeMessage {
  const op = 'subscribe';
  const s = messageSignature(value);
  const given = [s.user, s.sessionId, s.sig].filter((v) => v !== undefined).length;
  if (given !== 0 && given !== 3) throw new InvalidSubscriptionError('party proof needs all of "user", "sessionId" and "sig"');
  const depth = value.depth;
  if (depth !== undefined && !(typeof depth === 'number' && Number.isSafeInteger(depth))) throw new MalformedMessageError('"depth" must be an integer');
  const snapshot = value.snapshot;
  if (snapshot !== undefined && typeof snapshot !== 'boolean') throw new MalformedMessageError('"snapshot" must be true or false');
  return {
    op,
    id,
    lists: lists(value),
    proof: given === 3 ? { user: s.user!, sessionId: s.sessionId!, sig: s.sig! } : null,
    depth: depth === undefined ? null : String(depth),
    group: optionalString(value, 'group', 64) ?? null,
    throttle: typeof value.throttle === 'number' && Number.isSafeInteger(value.throttle) ? String(value.throttle) : null,
    snapshot: snapshot === undefined ? null : snapshot,
  };
}

/** Reads an `unsubscribe` message. */
export function readUnsubscribe(value: Record<string, unknown>, id: MessageId): UnsubscribeMessage {
  return { op: 'unsubscribe', id, lists: lists(value) };
}
