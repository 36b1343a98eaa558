// Change the connection's filters: the socket's `subscribe` (docs/stream.md "Talking to the
// socket"). Answered by `stream.ack`, which the hub writes with the filters as applied, followed by
// the snapshot frames of what was added. Changes of one connection run one after the other (their
// lane is serial), after its opening: its snapshot and replay were made for the URL's filters.
import { Type } from 'typebox';
import { readSubscribe, type SubscribeMessage, type UnsubscribeMessage } from '../../stream/client-messages.js';
import { IntervalLiteral, Kind, list, MessageIdField, ProofSession, ProofSig, ProofUser } from '../../stream/message-schemas.js';
import { applySubscribe, applyUnsubscribe } from '../../stream/subscription-change.js';
import { snapshotReads } from '../../stream/user-snapshot.js';
import type { Subscription } from '../../stream/subscription.js';
import { Market, Party } from '../../contracts/wire.js';
import { proveParties } from '../stream-upgrade.js';
import type { CallResult } from './declaration.js';
import { declareCall } from './declaration.js';
import type { ConnectionScope } from './connection.js';

export const SubscribeOp = Type.Object(
  {
    op: Type.Literal('subscribe'),
    id: MessageIdField,
    kinds: list(Kind, 'Frame kinds to add (opt-in kinds included)'),
    markets: list(Market, 'Markets to add; each must be one the engine lists (else unknown_market)'),
    intervals: list(IntervalLiteral, 'Candle intervals to add'),
    party: list(Party, 'Parties to add; unless AUTH_DISABLED, proven by user/sessionId/sig exactly as in the URL'),
    user: ProofUser,
    sessionId: ProofSession,
    sig: ProofSig('"GET\\n/v1/stream\\n<tsMs>\\n" (single use)'),
    depth: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'With orderbook.delta: levels per side of the book view' })),
    group: Type.Optional(Type.String({ maxLength: 64, description: 'With orderbook.delta: none, sig:2..sig:5 or tick:<decimal>' })),
    throttle: Type.Optional(
      Type.Union([Type.Literal(0), Type.Literal(100), Type.Literal(500)], { description: 'With orderbook.delta: at most one conflated delta per 100 or 500 ms (0: every change)' }),
    ),
    snapshot: Type.Optional(Type.Boolean({ description: 'false: no snapshot frames for what was added; default: the connection\'s `snapshot`' })),
  },
  { additionalProperties: false, description: 'Adds to the connection\'s filters; answered by stream.ack (then the snapshot frames of what was added) or stream.error.' },
);

const NOT_ANSWERED: CallResult = { answered: null };
const ACKED: CallResult = { answered: 'ack' };

/** A subscription change on its connection (subscribe and unsubscribe alike). */
export async function changeFilters(message: SubscribeMessage | UnsubscribeMessage, c: ConnectionScope | null): Promise<CallResult> {
  if (!c) throw new Error(`${message.op} is a socket call`);
  const { client, stream } = c;
  if (client.opening && !(await client.opening.catch(() => false))) return NOT_ANSWERED;
  if (client.closing) return NOT_ANSWERED;
  let next: Subscription;
  let snapshot = false;
  if (message.op === 'subscribe') {
    // Only the parties this message adds need its proof; those held were proven before.
    await proveParties((message.lists.party ?? []).filter((p) => !client.sub.parties.has(p)), message.proof, stream.deps, () =>
      stream.budgets.spend('session_lookups', c.address),
    );
    next = applySubscribe(client.sub, message, stream.knownMarkets());
    if (next.book !== client.sub.book) stream.admitBookView?.(next.book);
    snapshot = message.snapshot ?? client.sub.snapshot;
    // The snapshot reads every held party's user channels again: charged before, refused whole past the budget.
    await stream.budgets.spend('snapshot_reads', c.address, snapshotReads(next, snapshot));
  } else {
    next = applyUnsubscribe(client.sub, message, stream.knownMarkets());
  }
  await stream.hub.resubscribe(client, next, c.ack, snapshot);
  return ACKED;
}

export const subscribe = declareCall<SubscribeMessage>({
  op: 'subscribe',
  rest: null,
  summary: 'Adds kinds, markets, intervals, parties (with proof) and sets the book view; answered by stream.ack or stream.error.',
  message: SubscribeOp,
  answer: null,
  budget: { weight: () => 0, party: 'none' },
  lane: 'changes',
  fromMessage: readSubscribe,
  handle: (message, env) => changeFilters(message, env.connection),
});
