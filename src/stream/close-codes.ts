// The close codes the gateway ends a stream connection with, by name. Each code, its meaning and the
// rule a client follows after it are declared once in the wire vocabulary shared with the client
// (packages/client/src/wire/vocabulary.ts CLOSE_CODES); each name here must be one of them (`satisfies`),
// and nothing else in src/ writes a code as a literal.
import { CLOSE_CODES, type CloseCodeNumber } from '../../packages/client/src/wire/vocabulary.js';

export { CLOSE_CODES };

/** The gateway is shutting down: reconnect elsewhere with since. */
export const GOING_AWAY = 1001 satisfies CloseCodeNumber;
/** The client sent past its message rate. */
export const POLICY_VIOLATION = 1008 satisfies CloseCodeNumber;
/** The client sent a message far over the size bound. */
export const MESSAGE_TOO_BIG = 1009 satisfies CloseCodeNumber;
/** The stream could not be opened for this connection. */
export const INTERNAL_ERROR = 1011 satisfies CloseCodeNumber;
/** What was left unsent to the client passed its bound. */
export const SLOW_CONSUMER = 4008 satisfies CloseCodeNumber;
/** The engine's history was replaced (connections without control messages). */
export const STREAM_RESET = 4011 satisfies CloseCodeNumber;
