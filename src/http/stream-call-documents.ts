// The documented face (src/contracts/declarations.ts ClientCallDocument) of each call a client may
// send on /v1/stream, for the AsyncAPI document: the op, the REST route of the same call, the
// schema the gateway checks the message against, and a summary.
import type { ClientCallDocument } from '../contracts/declarations.js';
import { OP_SCHEMAS } from '../stream/message-schemas.js';

type Op = keyof typeof OP_SCHEMAS;
const route = (method: 'GET' | 'POST' | 'DELETE', url: string) => ({ method, url });

const CALLS: { readonly [K in Op]: { summary: string; rest: ClientCallDocument['rest'] } } = {
  subscribe: { rest: null, summary: 'Adds kinds, markets, intervals, parties (with proof) and sets the book view; answered by stream.ack or stream.error.' },
  unsubscribe: { rest: null, summary: 'Removes kinds, markets, intervals, parties; answered by stream.ack or stream.error.' },
  'order.place': { rest: route('POST', '/v1/orders'), summary: 'A signed POST /v1/orders; answered by stream.answer or stream.error.' },
  'order.cancel': { rest: route('DELETE', '/v1/orders/:orderId'), summary: 'A signed DELETE /v1/orders/:orderId; answered by stream.answer or stream.error.' },
  'order.batch': {
    rest: route('POST', '/v1/orders/batch'),
    summary: 'Up to 50 signed place / cancel calls, each signed as alone (POST /v1/orders/batch); answered by stream.answer {results, weight} or stream.error.',
  },
  'order.replace': {
    rest: route('POST', '/v1/orders/replace'),
    summary: 'A signed cancel, then a signed place once the engine confirmed the cancel (POST /v1/orders/replace); answered by stream.answer {cancel, place, replaced}.',
  },
  'order.status': {
    rest: route('GET', '/v1/users/:party/orders/by-client-id/:clientOrderId'),
    summary: 'An order of a party this connection holds, by its clientOrderId; answered by stream.answer {source, order} or stream.error (403, 404).',
  },
  'switch.arm': { rest: null, summary: "Arms the dead man's switch with signed cancels (docs/trading.md \"Dead man's switch\"); also a heartbeat." },
  'switch.heartbeat': { rest: null, summary: "Pushes the armed switch's deadline to now + its timeout." },
  'switch.disarm': { rest: null, summary: 'Disarms the switch.' },
};

export const STREAM_CALL_DOCUMENTS: readonly ClientCallDocument[] = (Object.keys(CALLS) as Op[]).map((op) => ({
  op,
  rest: CALLS[op].rest,
  summary: CALLS[op].summary,
  message: OP_SCHEMAS[op],
  answer: null,
}));
