// TypeBox schemas of every message on /v1/stream. One definition feeds the AsyncAPI document
// (asyncapi.ts) and the tests that check real frames against it, so the two cannot drift.
import { Type } from 'typebox';
import { Decimal, Market, Party, Seq, Timestamp } from '../contracts/wire.js';
import { CANDLE_INTERVALS, PASSTHROUGH_KINDS } from '../contracts/frame.js';
import { AccountBody } from '../contracts/account-wire.js';
import { OrderbookDeltaFrame, ViewSnapshotPayload } from './book-schemas.js';

import { FillFrame, OrderUpdateFrame } from './user-schemas.js';
import { AckMessage, AnswerMessage, ErrorMessage } from './message-schemas.js';

// Every frame schema is exported from here (the client's wire types are generated from this module).
export { OrderbookDeltaFrame, OrderUpdateFrame, FillFrame, AckMessage, AnswerMessage, ErrorMessage };

const Ts = { ...Timestamp, description: 'ISO 8601 UTC with milliseconds (engine time of the event)' };
const PositionId = Type.String({ minLength: 1, maxLength: 64, description: 'Epoch identity of the position' });
const Side = Type.Union([Type.Literal('buy'), Type.Literal('sell')]);
export const Interval = Type.Union(
  CANDLE_INTERVALS.map((i) => Type.Literal(i)),
  { description: 'Candle interval, UTC-aligned' },
);

const strict = { additionalProperties: false } as const;

/** Marks a frame sent as state on subscribe (not caused by a new event); absent on live frames. */
const SnapshotMark = Type.Optional(
  Type.Literal(true, {
    description:
      'Present (true) only on snapshot frames: the state on subscribe, sent before live frames; seq is the seq the state is current as of',
  }),
);
const SnapshotSeq = { ...Seq, description: 'Seq of the event (on a snapshot frame: the seq the state is current as of)' };

export const PositionUpdateFrame = Type.Object(
  {
    kind: Type.Literal('position.update'),
    seq: SnapshotSeq,
    ts: Ts,
    market: Market,
    userParty: Party,
    snapshot: SnapshotMark,
    payload: Type.Object(
      {
        positionId: PositionId,
        size: { ...Decimal, description: 'Signed size after the fill; "0.0000000000" when the epoch closed' },
        entryPrice: Decimal,
        realizedPnl: { ...Decimal, description: 'Realized PnL of this epoch; restarts at zero in a new epoch' },
        asOfSeq: { ...Seq, description: 'Seq the values are current as of; never goes back for one positionId' },
      },
      strict,
    ),
  },
  { ...strict, description: 'One per fill leg, scoped to the leg party. A flip sends the old epoch (size 0) first, then the new one.' },
);

export const BalanceUpdateFrame = Type.Object(
  {
    kind: Type.Literal('balance.update'),
    seq: SnapshotSeq,
    ts: Ts,
    userParty: Party,
    snapshot: SnapshotMark,
    payload: Type.Object({ balance: Decimal, asOfSeq: Seq }, strict),
  },
  { ...strict, description: 'One per fill leg: the party cash balance after the leg (no market).' },
);

export const AccountUpdateFrame = Type.Object(
  {
    kind: Type.Literal('account.update'),
    seq: SnapshotSeq,
    ts: Ts,
    userParty: Party,
    snapshot: SnapshotMark,
    payload: AccountBody,
  },
  {
    ...strict,
    description:
      'The whole account of the party (as GET /v1/users/:party/account): on subscribe, then after every event that changed its collateral, positions, orders or the mark of a market it holds (no market in the envelope).',
  },
);

export const OpenInterestUpdateFrame = Type.Object(
  {
    kind: Type.Literal('open_interest.update'),
    seq: SnapshotSeq,
    ts: Ts,
    market: Market,
    snapshot: SnapshotMark,
    payload: Type.Object(
      {
        openInterest: { ...Decimal, description: 'Open interest in base units: Σ size of the open long position epochs (= Σ |size| of the short ones), as GET /v1/markets `openInterest`' },
        asOfSeq: { ...Seq, description: 'The seq the figure is current as of (the last event of the batch that changed it; on a snapshot frame, the head)' },
      },
      strict,
    ),
  },
  {
    ...strict,
    description:
      'Opt-in (kinds=open_interest.update): the market\'s open interest after a batch of engine events that changed it (at most one per market per batch), and its current value for every market on subscribe. Public.',
  },
);

export const TradeFrame = Type.Object(
  {
    kind: Type.Literal('trade'),
    seq: Seq,
    ts: Ts,
    market: Market,
    snapshot: SnapshotMark,
    payload: Type.Object(
      {
        matchId: Type.String({ description: "The match's id, as GET /v1/trades gives it" }),
        side: { ...Side, description: 'Taker side' },
        size: { ...Decimal, description: 'Match size (a flip is one trade)' },
        price: Decimal,
        takerOrderId: Type.String(),
        makerOrderId: Type.String(),
      },
      strict,
    ),
  },
  { ...strict, description: 'Public, one per match (one per engine.order_filled event). On subscribe: the last 50 per market, marked snapshot.' },
);

const Level = Type.Tuple([Decimal, Decimal], { description: '[price, size]' });
export const OrderbookSnapshotFrame = Type.Object(
  {
    kind: Type.Literal('orderbook.snapshot'),
    seq: { ...Seq, description: 'The book seq reported by the engine' },
    ts: { ...Timestamp, description: 'When the gateway polled the book' },
    market: Market,
    snapshot: SnapshotMark,
    payload: Type.Union([
      Type.Object(
        { depth: Type.Integer({ minimum: 1, maximum: 100 }), bids: Type.Array(Level), asks: Type.Array(Level) },
        { ...strict, description: 'The engine book polled every WS_ORDERBOOK_POLL_MS (connections without orderbook.delta)' },
      ),
      ViewSnapshotPayload,
    ]),
  },
  {
    ...strict,
    description:
      'Full book (not a delta), best first. Without orderbook.delta in kinds: the polled engine book, sent only when its content changed. ' +
      'With it: the connection\'s view (depth, grouping, order counts, bookSeq, checksum) on subscribe and after a rebuild; orderbook.delta frames follow.',
  },
);

const CandlePayload = Type.Object(
  {
    openTs: { ...Timestamp, description: 'Bucket start' },
    closeTs: { ...Timestamp, description: 'Bucket end (exclusive)' },
    open: Decimal,
    high: Decimal,
    low: Decimal,
    close: Decimal,
    volume: { ...Decimal, description: 'Base size traded in the bucket' },
    trades: Type.Integer({ minimum: 1, description: 'Matches in the bucket' }),
  },
  strict,
);

export const CandleUpdateFrame = Type.Object(
  { kind: Type.Literal('candle.update'), seq: SnapshotSeq, ts: Ts, market: Market, interval: Interval, snapshot: SnapshotMark, payload: CandlePayload },
  { ...strict, description: 'The open bucket after a match (as a snapshot frame: the open bucket on subscribe, as of its latest match).' },
);

export const CandleCloseFrame = Type.Object(
  {
    kind: Type.Literal('candle.close'),
    seq: { ...Seq, description: 'Seq of the event whose engine time ended the bucket' },
    ts: Ts,
    market: Market,
    interval: Interval,
    payload: CandlePayload,
  },
  { ...strict, description: 'Exactly once per bucket, when engine time reaches its end: commit the bar to history.' },
);

export const PassthroughFrame = Type.Object(
  {
    seq: Seq,
    kind: Type.Union(PASSTHROUGH_KINDS.map((k) => Type.Literal(k))),
    ts: Ts,
    market: Type.Optional(Market),
    party: Type.Optional(Party),
    payload: Type.Object({}, { additionalProperties: true, description: 'As the engine sent it (docs/engine.md "Event stream")' }),
  },
  { ...strict, description: 'An engine event forwarded unchanged. With `party` it is user-scoped.' },
);

export const SubscribedMessage = Type.Object(
  {
    kind: Type.Literal('stream.subscribed'),
    seq: { ...Seq, description: 'The head (headSeq, 0 when the gateway has no event yet)' },
    ts: Timestamp,
    payload: Type.Object(
      {
        kinds: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'null: every kind' }),
        markets: Type.Union([Type.Array(Market), Type.Null()], { description: 'null: every market' }),
        marketsIgnored: Type.Boolean({ description: 'true when none of the asked markets is known to the engine (rule 1)' }),
        intervals: Type.Union([Type.Array(Interval), Type.Null()]),
        parties: Type.Array(Party),
        since: Type.Union([Seq, Type.Null()]),
        epoch: Type.String({
          minLength: 1,
          maxLength: 64,
          description: 'Identity of the engine history being streamed; pass it back as `epoch` with `since` when resuming',
        }),
        headSeq: Type.Union([Seq, Type.Null()], { description: 'The newest seq the gateway has (null before any)' }),
      },
      strict,
    ),
  },
  {
    ...strict,
    description:
      'Control message, opt-in (`control=true`, or `since`): first message of the connection, and again when rule 1 changes the filters in effect (the engine market list loaded or changed). Only when the stream is enabled.',
  },
);

export const GapMessage = Type.Object(
  {
    kind: Type.Literal('stream.gap'),
    seq: { ...Seq, description: 'The head (0 when the gateway has no event yet)' },
    ts: Timestamp,
    payload: Type.Object(
      {
        requestedSince: Seq,
        oldestAvailableSeq: Type.Union([Seq, Type.Null()], { description: 'Oldest seq the stream delivers from here on (the replay, or the seq after a live gap); null when the replay holds nothing' }),
        backfill: Type.String({ description: 'REST path that returns the missing events' }),
      },
      strict,
    ),
  },
  {
    ...strict,
    description:
      'Control message: sent after stream.subscribed when `since` is older than the replay history, and to every control connection when the ' +
      'source skipped events live (unfillable, or longer than SSE_MAX_EVENT_BYTES): backfill from REST.',
  },
);

export const ResetMessage = Type.Object(
  {
    kind: Type.Literal('stream.reset'),
    seq: { ...Seq, description: 'The head of the history now streamed (0 when none yet)' },
    ts: Timestamp,
    payload: Type.Object(
      {
        epoch: Type.String({ minLength: 1, maxLength: 64, description: 'The epoch now streamed' }),
        previousEpoch: Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()], {
          description: 'The epoch the client knew (epoch_mismatch: the one it named; history_replaced: the one before)',
        }),
        reason: Type.Union([Type.Literal('epoch_mismatch'), Type.Literal('history_replaced')]),
      },
      strict,
    ),
  },
  {
    ...strict,
    description:
      'Control message (control=true or since): discard every state built from frames and bootstrap again (REST, plus the snapshot frames that follow). ' +
      'epoch_mismatch: right after stream.subscribed when `since` came with another `epoch` (served as a fresh connection: snapshots, then live; no replay). ' +
      'history_replaced: the engine history was replaced while connected (connections without control messages are closed with 4011 instead).',
  },
);

export const HeartbeatMessage = Type.Object(
  {
    kind: Type.Literal('stream.heartbeat'),
    seq: { ...Seq, description: 'headSeq (0 when null)' },
    ts: Timestamp,
    payload: Type.Object({ headSeq: Type.Union([Seq, Type.Null()], { description: 'The newest seq the gateway has' }) }, strict),
  },
  {
    ...strict,
    description: 'Sent every `heartbeat` seconds to connections that asked for it (no `control` needed): a browser can tell a half-open socket from a quiet market.',
  },
);

export const LaggingMessage = Type.Object(
  {
    kind: Type.Literal('stream.lagging'),
    seq: { ...Seq, description: 'headSeq (0 when null)' },
    ts: Timestamp,
    payload: Type.Object(
      {
        lagging: Type.Boolean({ description: 'true: this replica is behind the engine (sent every 2 s while it is); false: caught up again (sent once)' }),
        headSeq: Type.Union([Seq, Type.Null()], { description: 'The newest seq this replica has' }),
        engineHeadSeq: Type.Union([Seq, Type.Null()], { description: "The engine's newest seq as the replica last observed it" }),
        behindEvents: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Events the replica lacks (null: the head is unknown)' }),
        behindSeconds: Type.Number({ minimum: 0, description: 'How long ago the replica last held everything the engine had' }),
      },
      strict,
    ),
  },
  {
    ...strict,
    description:
      'Control (control=true or since), fleet replicas (NATS_URL) only: the replica is behind the engine by more than STREAM_BEHIND_MAX_S. ' +
      'Nothing is lost: the missing frames follow, in order, once it catches up (then `lagging: false`). A client may instead reconnect ' +
      'elsewhere with since=<last seq>.',
  },
);
