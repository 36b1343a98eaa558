// What a client may send on an open /v1/stream connection (docs/stream.md "Talking to the
// socket"): JSON text messages, each with an `op` and a client-chosen `id` echoed in the answer.
//
//   subscribe    add kinds / markets / intervals / parties (with their proof) and set the book view
//   unsubscribe  remove kinds / markets / intervals / parties
//   order.place  a signed POST /v1/orders: the body the session key signed, and the signature
//   order.cancel a signed DELETE /v1/orders/:orderId
//   order.batch   up to 50 signed place / cancel calls (POST /v1/orders/batch)
//   order.status  an order of a party the connection holds, by its clientOrderId
//   switch.arm / switch.heartbeat / switch.disarm  the dead man's switch of a party the connection holds
//   order.replace a signed cancel, then a signed place once the cancel is confirmed (POST /v1/orders/replace)
//
// This module only reads a message into one of these shapes, or throws MalformedMessageError
// (400 `bad_request` at the edge) naming what is wrong. What a subscribe does to the connection's
// filters is subscription-change.ts; orders are forwarded by the trading proxy's own code.
import { CANDLE_INTERVALS, FRAME_KINDS } from '../contracts/frame.js';
import { MARKET_PATTERN, PARTY_PATTERN } from '../contracts/wire.js';
import { Compile } from 'typebox/compile';
import { InvalidSubscriptionError } from './errors.js';
import { OP_SCHEMAS, SIGNING_VALUE_PATTERN } from './message-schemas.js';
import type { BatchBody, ReplaceBody } from '../contracts/desk.js';
import { assertOneParty } from '../contracts/batch-party.js';

export const CLIENT_OPS = ['subscribe', 'unsubscribe', 'order.place', 'order.cancel', 'order.batch', 'order.replace', 'order.status', 'switch.arm', 'switch.heartbeat', 'switch.disarm'] as const;
export type ClientOp = (typeof CLIENT_OPS)[number];

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

export interface PlaceOrderMessage {
  op: 'order.place';
  id: MessageId;
  /** The request body the session key signed, as sent over REST (the bytes of this string, UTF-8). */
  body: string;
  signature: MessageSignature;
}

export interface CancelOrderMessage {
  op: 'order.cancel';
  id: MessageId;
  orderId: string;
  signature: MessageSignature;
}

/** `order.batch`: the REST batch body, checked against its schema (contracts/desk.ts). */
export interface BatchMessage extends BatchBody {
  op: 'order.batch';
  id: MessageId;
}

/** `order.replace`: the REST cancel-replace body. */
export interface ReplaceMessage extends ReplaceBody {
  op: 'order.replace';
  id: MessageId;
}

/** `order.status`: an order of a party the connection holds, by its client order id. */
export interface OrderStatusMessage {
  op: 'order.status';
  id: MessageId;
  party: string;
  clientOrderId: string;
}

/** The dead man's switch ops (message-schemas.ts SwitchArmOp …): read as their schema checked them. */
export type SwitchMessage = SwitchMessageOf<'switch.arm'> | SwitchMessageOf<'switch.heartbeat'> | SwitchMessageOf<'switch.disarm'>;
interface SwitchMessageOf<Op extends string> {
  op: Op;
  id: MessageId;
  party: string;
  name?: string;
  sessionId?: string;
  timeoutMs?: number;
  cancels?: { orderId: string; sig: string }[];
}

export type ClientMessage = SubscribeMessage | UnsubscribeMessage | PlaceOrderMessage | CancelOrderMessage | BatchMessage | ReplaceMessage | OrderStatusMessage | SwitchMessage;

/** Most values one list of a message may carry (as the URL's lists). */
export const MAX_MESSAGE_LIST = 100;
const ID = /^[\x20-\x7e]{1,64}$/;
const KINDS: ReadonlySet<string> = new Set(FRAME_KINDS);
const INTERVALS: ReadonlySet<string> = new Set(CANDLE_INTERVALS);
const PARTY = new RegExp(PARTY_PATTERN);
const MARKET = new RegExp(MARKET_PATTERN);
const SIGNING_VALUE = new RegExp(SIGNING_VALUE_PATTERN);
/**
 * The ops' schemas compiled once. Interpreted (Value.Check), one subscribe with its lists at their
 * bound (300 values, each tried against a union of literals) cost milliseconds: one address's
 * connections at the message rate kept the event loop busy for seconds.
 */
const CHECKS = {
  subscribe: Compile(OP_SCHEMAS.subscribe),
  unsubscribe: Compile(OP_SCHEMAS.unsubscribe),
  'order.place': Compile(OP_SCHEMAS['order.place']),
  'order.cancel': Compile(OP_SCHEMAS['order.cancel']),
  'order.batch': Compile(OP_SCHEMAS['order.batch']),
  'order.replace': Compile(OP_SCHEMAS['order.replace']),
  'order.status': Compile(OP_SCHEMAS['order.status']),
  'switch.arm': Compile(OP_SCHEMAS['switch.arm']),
  'switch.heartbeat': Compile(OP_SCHEMAS['switch.heartbeat']),
  'switch.disarm': Compile(OP_SCHEMAS['switch.disarm']),
};

const FIELDS: Record<ClientOp, readonly string[]> = {
  subscribe: ['op', 'id', 'kinds', 'markets', 'intervals', 'party', 'user', 'sessionId', 'sig', 'depth', 'group', 'throttle', 'snapshot'],
  unsubscribe: ['op', 'id', 'kinds', 'markets', 'intervals', 'party'],
  'order.place': ['op', 'id', 'body', 'user', 'sessionId', 'sig'],
  'order.cancel': ['op', 'id', 'orderId', 'user', 'sessionId', 'sig'],
  'order.batch': ['op', 'id', 'user', 'sessionId', 'mode', 'stopOnFailure', 'items'],
  'order.replace': ['op', 'id', 'user', 'sessionId', 'cancel', 'place'],
  'order.status': ['op', 'id', 'party', 'clientOrderId'],
  'switch.arm': ['op', 'id', 'party', 'sessionId', 'name', 'timeoutMs', 'cancels'],
  'switch.heartbeat': ['op', 'id', 'party', 'name'],
  'switch.disarm': ['op', 'id', 'party', 'name'],
};

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

/** The op of a message when it names a known one (for the error answer). */
export function messageOpOf(value: unknown): ClientOp | null {
  if (!isObject(value)) return null;
  return (CLIENT_OPS as readonly unknown[]).includes(value.op) ? (value.op as ClientOp) : null;
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

function signature(message: Record<string, unknown>): MessageSignature {
  const s: MessageSignature = {};
  const user = signingValue(message, 'user');
  const sessionId = signingValue(message, 'sessionId');
  const sig = signingValue(message, 'sig');
  if (user !== undefined) s.user = user;
  if (sessionId !== undefined) s.sessionId = sessionId;
  if (sig !== undefined) s.sig = sig;
  return s;
}

/**
 * Reads one text message; throws MalformedMessageError or InvalidSubscriptionError. The fields are
 * read here (for messages and codes that say what is wrong), then the whole message is checked
 * against its op's schema (message-schemas.ts), the one the AsyncAPI document shows.
 */
export function parseClientMessage(text: string): ClientMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MalformedMessageError('the message is not JSON');
  }
  const message = readClientMessage(value);
  // As REST: an item naming a signer of its own is refused by name before the schema's check.
  if (message.op === 'order.batch' || message.op === 'order.replace') assertOneParty(value);
  const check = CHECKS[message.op];
  if (!check.Check(value)) {
    const first = check.Errors(value)[0];
    throw new MalformedMessageError(`the message does not fit ${message.op}: ${first ? `${first.instancePath || '/'} ${first.message}` : 'invalid'}`);
  }
  return message;
}

function readClientMessage(value: unknown): ClientMessage {
  if (!isObject(value)) throw new MalformedMessageError('the message must be a JSON object {"op", "id", …}');
  const op = messageOpOf(value);
  if (op === null) throw new MalformedMessageError(`"op" must be one of ${CLIENT_OPS.join(', ')}`);
  const id = messageIdOf(value);
  if (id === null) throw new MalformedMessageError('"id" must be a string of 1..64 printable ASCII characters or an integer');
  for (const name of Object.keys(value)) {
    if (!FIELDS[op].includes(name)) throw new MalformedMessageError(`unknown field "${name.slice(0, 64)}" for op ${op} (allowed: ${FIELDS[op].join(', ')})`);
  }
  switch (op) {
    case 'subscribe': {
      const s = signature(value);
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
    case 'unsubscribe':
      return { op, id, lists: lists(value) };
    case 'order.place': {
      const body = value.body;
      if (typeof body !== 'string') throw new MalformedMessageError('"body" must be the signed request body as a string (the JSON text sent over REST)');
      return { op, id, body, signature: signature(value) };
    }
    case 'order.cancel': {
      const orderId = value.orderId;
      if (typeof orderId !== 'string' || orderId.length < 1 || orderId.length > 64) throw new MalformedMessageError('"orderId" must be a string of 1..64 characters');
      return { op, id, orderId, signature: signature(value) };
    }
    // The whole shape is the schema's (checked by parseClientMessage right after): no field to read one by one.
    case 'order.batch':
      return value as unknown as BatchMessage;
    case 'order.replace':
      return value as unknown as ReplaceMessage;
    case 'order.status':
      return value as unknown as OrderStatusMessage;
    case 'switch.arm':
    case 'switch.heartbeat':
    case 'switch.disarm':
      return value as unknown as SwitchMessage;
  }
}
