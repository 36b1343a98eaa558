// Every kind of message the gateway sends on /v1/stream, declared once: its schema, whether a
// connection must opt in to it, who may receive it, and its summary. The kind lists, the `kinds`
// filter's validation, the schema a frame is checked against, and the AsyncAPI messages are all
// derived from these declarations; the names themselves are the wire vocabulary shared with the
// client (packages/client/src/wire/vocabulary.ts).
//
// Adding a domain frame kind: its name in the vocabulary, its schema and one entry in DOMAIN below
// (the compiler refuses a vocabulary kind without an entry), and the live feature that makes it.
import type { TSchema } from 'typebox';
import type { FrameKindDeclaration, FrameScope } from '../contracts/declarations.js';
import { PASSTHROUGH_KINDS } from '../contracts/frame.js';
import { CONTROL_KINDS, DOMAIN_FRAME_KINDS, type ControlKind, type DomainFrameKind } from '../../packages/client/src/wire/vocabulary.js';
import {
  AccountUpdateFrame,
  BalanceUpdateFrame,
  CandleCloseFrame,
  CandleUpdateFrame,
  GapMessage,
  HeartbeatMessage,
  LaggingMessage,
  OpenInterestUpdateFrame,
  OrderbookSnapshotFrame,
  PassthroughFrame,
  PositionUpdateFrame,
  ResetMessage,
  SubscribedMessage,
  TradeFrame,
} from './schemas.js';
import { OrderbookDeltaFrame } from './book-schemas.js';
import { FillFrame, OrderUpdateFrame } from './user-schemas.js';
import { AckMessage, AnswerMessage, ErrorMessage } from './message-schemas.js';

type Declared = Omit<FrameKindDeclaration, 'kind' | 'origin'>;

const party = (schema: TSchema, summary: string, optIn = false): Declared => ({ schema, summary, optIn, scope: 'party' });
const open = (schema: TSchema, summary: string, optIn = false): Declared => ({ schema, summary, optIn, scope: 'public' });

/** The gateway's own frames, made from the engine's events by the live features. */
const DOMAIN: { readonly [K in DomainFrameKind]: Declared } = {
  'position.update': party(PositionUpdateFrame, 'Position epoch after a fill leg (user-scoped: needs `party`). Filter: party, markets.'),
  'balance.update': party(BalanceUpdateFrame, 'Cash balance after a fill leg (user-scoped: needs `party`). Filter: party.'),
  'account.update': party(
    AccountUpdateFrame,
    'Opt-in (kinds=account.update): the party account after a change of its collateral, positions, orders or a mark (user-scoped: needs `party`). Filter: party.',
    true,
  ),
  trade: open(TradeFrame, 'One per match, public. Filter: markets.'),
  'orderbook.snapshot': open(
    OrderbookSnapshotFrame,
    "Full book. Without orderbook.delta: the polled engine book, when it changed. With it: the connection's view on subscribe and after a rebuild. Filter: markets.",
  ),
  'orderbook.delta': open(
    OrderbookDeltaFrame,
    "Opt-in (kinds=orderbook.delta): changed levels of the connection's book view (depth, group), with bookSeq/prevBookSeq and a CRC-32 checksum. Filter: markets.",
    true,
  ),
  'order.update': party(
    OrderUpdateFrame,
    'Opt-in user channel (kinds=order.update, needs a proven `party`): the order after each change, with the reason it ended; open orders on subscribe. Filter: party, markets.',
    true,
  ),
  fill: party(FillFrame, "Opt-in user channel (kinds=fill, needs a proven `party`): the party's own fill legs only; the last fills on subscribe. Filter: party, markets.", true),
  'open_interest.update': open(
    OpenInterestUpdateFrame,
    "Opt-in (kinds=open_interest.update): a market's open interest (as GET /v1/markets openInterest) after a batch that changed it, at most once per market per batch; every market's on subscribe. Filter: markets.",
    true,
  ),
  'candle.update': open(CandleUpdateFrame, 'Open bucket after a match. Filter: markets, intervals.'),
  'candle.close': open(CandleCloseFrame, 'Exactly once per bucket. Filter: markets, intervals.'),
};

/** The stream's own news and the answers to a client's messages: never in a `kinds` filter. */
const CONTROL: { readonly [K in ControlKind]: Omit<Declared, 'optIn'> } = {
  'stream.subscribed': {
    schema: SubscribedMessage,
    scope: 'public',
    summary: 'Control, opt-in (control=true or since): first message, the filters in effect; sent again when rule 1 changes them.',
  },
  'stream.gap': {
    schema: GapMessage,
    scope: 'public',
    summary:
      'Control: to a replay client (since) when `since` is older than the replay history; to every control connection when the source skipped events live ' +
      '(neither the engine nor the database had them, or one was longer than SSE_MAX_EVENT_BYTES). Backfill (requestedSince, oldestAvailableSeq] from /v1/events.',
  },
  'stream.reset': {
    schema: ResetMessage,
    scope: 'public',
    summary: 'Control (control=true or since): discard all state and bootstrap again; epoch_mismatch (a since= from another epoch) or history_replaced.',
  },
  'stream.heartbeat': {
    schema: HeartbeatMessage,
    scope: 'public',
    summary: 'Every `heartbeat` seconds, only to connections that asked for it: the head seq; lets a browser notice a half-open socket.',
  },
  'stream.lagging': {
    schema: LaggingMessage,
    scope: 'public',
    summary:
      'Control (control=true or since), fleet replicas only: this replica is behind the engine (every 2 s while it is; `lagging: false` once caught up). The frames follow; nothing is lost.',
  },
  'stream.ack': {
    schema: AckMessage,
    scope: 'public',
    summary: 'Answer to subscribe / unsubscribe (only to a client that sent one): the filters as applied; after a subscribe the snapshot frames of what was added follow.',
  },
  'stream.answer': {
    schema: AnswerMessage,
    scope: 'public',
    summary:
      "Answer to a client's call (order.place, order.cancel, order.batch, order.replace, order.status, switch.*): the REST answer of the same call (status + body).",
  },
  'stream.error': {
    schema: ErrorMessage,
    scope: 'public',
    summary: "A client message refused, with the code (and status) REST answers for the same refusal, the message's id and op.",
  },
};

const PASSTHROUGH_SUMMARY = 'An engine event forwarded unchanged. Filter: kinds, markets, and party when it carries one.';
const PASSTHROUGH_SCOPE: FrameScope = 'party-when-present';

/** Every declaration, domain kinds first, then the engine's kinds, then the control messages. */
export const FRAME_KIND_DECLARATIONS: readonly FrameKindDeclaration[] = [
  ...DOMAIN_FRAME_KINDS.map((kind): FrameKindDeclaration => ({ kind, origin: 'domain', ...DOMAIN[kind] })),
  ...PASSTHROUGH_KINDS.map((kind): FrameKindDeclaration => ({ kind, origin: 'passthrough', schema: PassthroughFrame, summary: PASSTHROUGH_SUMMARY, optIn: false, scope: PASSTHROUGH_SCOPE })),
  ...CONTROL_KINDS.map((kind): FrameKindDeclaration => ({ kind, origin: 'control', optIn: false, ...CONTROL[kind] })),
];

const BY_KIND: ReadonlyMap<string, FrameKindDeclaration> = new Map(FRAME_KIND_DECLARATIONS.map((d) => [d.kind, d]));

/** The kinds a `kinds` filter may name: domain and engine kinds (control messages are not spec kinds). */
export const FILTERABLE_KINDS: readonly string[] = FRAME_KIND_DECLARATIONS.filter((d) => d.origin !== 'control').map((d) => d.kind);

/** Kinds sent only to a connection that names them in `kinds`. */
export const OPT_IN_KINDS: ReadonlySet<string> = new Set(FRAME_KIND_DECLARATIONS.filter((d) => d.optIn).map((d) => d.kind));

/** The declaration of a kind the gateway sends; undefined for any other string. */
export function declarationOf(kind: string): FrameKindDeclaration | undefined {
  return BY_KIND.get(kind);
}

/** The schema a message of this kind must satisfy (engine kinds share one). */
export function schemaFor(kind: string): TSchema | undefined {
  return BY_KIND.get(kind)?.schema;
}
