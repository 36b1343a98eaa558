// Remove from the connection's filters: the socket's `unsubscribe`, answered by `stream.ack`.
import { Type } from 'typebox';
import { Market, Party } from '../../contracts/wire.js';
import { readUnsubscribe, type UnsubscribeMessage } from '../../stream/client-messages.js';
import { IntervalLiteral, Kind, list, MessageIdField } from '../../stream/message-schemas.js';
import { declareCall } from './declaration.js';
import { changeFilters } from './subscribe.js';

export const UnsubscribeOp = Type.Object(
  {
    op: Type.Literal('unsubscribe'),
    id: MessageIdField,
    kinds: list(Kind, 'Frame kinds to remove (orderbook.snapshot stays while the connection keeps orderbook.delta: a book view keeps its snapshots)'),
    markets: list(Market, 'Markets to remove (refused on a connection that receives every market)'),
    intervals: list(IntervalLiteral, 'Candle intervals to remove'),
    party: list(Party, 'Parties to remove'),
  },
  { additionalProperties: false, description: 'Removes from the connection\'s filters; answered by stream.ack or stream.error.' },
);

export const unsubscribe = declareCall<UnsubscribeMessage>({
  op: 'unsubscribe',
  rest: null,
  summary: 'Removes kinds, markets, intervals, parties; answered by stream.ack or stream.error.',
  message: UnsubscribeOp,
  answer: null,
  budget: { weight: () => 0, party: 'none' },
  lane: 'changes',
  fromMessage: readUnsubscribe,
  handle: (message, env) => changeFilters(message, env.connection),
});
