// The wire vocabulary of the live stream, in one file the gateway and this client both import: the
// kinds a frame can have, the candle intervals, and every close code with the rule a client follows
// after it. It imports nothing (the package stands alone; the gateway reads it as its bottom layer),
// so a kind or a close code exists once and cannot drift between the two sides.
//
// What a frame kind carries (schema, opt-in, scope, summary) is declared on the gateway, once per
// kind (src/stream/frame-kinds.ts); the client's frame types are generated from those schemas.

/** Every kind of event on the engine's admin stream; the stream forwards each unchanged as a passthrough frame. */
export const ENGINE_EVENT_KINDS = [
  'engine.tick_start',
  'inbound.deposit',
  'inbound.withdrawal_request',
  'engine.approve_submitted',
  'engine.reject_submitted',
  'session.authorized',
  'inbound.order',
  'engine.order_placed',
  'engine.order_filled',
  'engine.order_cancelled',
  'engine.order_rejected',
  'engine.trigger_set',
  'engine.trigger_cancelled',
  'engine.trigger_fired',
  'engine.attached_resolved',
  'engine.user_batch_committed',
  'outbound.batch_committed',
] as const;
export type EngineEventKindName = (typeof ENGINE_EVENT_KINDS)[number];

/** The gateway's own frame kinds (made from the engine's events by the gateway). */
export const DOMAIN_FRAME_KINDS = [
  'position.update',
  'balance.update',
  'account.update',
  'trade',
  'orderbook.snapshot',
  'orderbook.delta',
  'order.update',
  'fill',
  'open_interest.update',
  'candle.update',
  'candle.close',
] as const;
export type DomainFrameKind = (typeof DOMAIN_FRAME_KINDS)[number];

/**
 * The gateway's control messages: the stream's own news (sent with `control=true` or `since`, or to
 * a connection that asked for heartbeats) and the answers to a client's messages. Not spec kinds:
 * never part of a `kinds` filter.
 */
export const CONTROL_KINDS = ['stream.subscribed', 'stream.gap', 'stream.reset', 'stream.heartbeat', 'stream.lagging', 'stream.ack', 'stream.answer', 'stream.error'] as const;
export type ControlKind = (typeof CONTROL_KINDS)[number];

export const CANDLE_INTERVALS = ['1m', '5m', '15m', '30m', '1h', '4h', '1d', '1w'] as const;
export type CandleIntervalName = (typeof CANDLE_INTERVALS)[number];

/**
 * What a client does after the socket closed with a code:
 * - `resume`: reconnect (after a backoff) with `since=<last seq>&epoch=<epoch>`; nothing is lost.
 * - `reset`: the engine's history was replaced: discard every state built from the stream,
 *   bootstrap from REST, reconnect without `since`.
 * - `stop`: do not reconnect (the client itself closed).
 */
export type ReconnectRule = 'resume' | 'reset' | 'stop';

export interface CloseCode {
  /** A short name for code and logs. */
  readonly name: string;
  readonly reconnect: ReconnectRule;
  /** What happened, for documentation (AsyncAPI, docs/stream.md). */
  readonly meaning: string;
}

/** Every close code a stream connection can end with, the gateway's and the client's own. */
export const CLOSE_CODES = {
  1000: { name: 'normal', reconnect: 'stop', meaning: 'Normal closure: the client stopped the stream itself' },
  1001: { name: 'going_away', reconnect: 'resume', meaning: 'Going away: the gateway is shutting down; reconnect with ?since=<last seq>' },
  1002: { name: 'protocol_error', reconnect: 'resume', meaning: 'Protocol error: the client broke the WebSocket protocol (closed by the WebSocket library at once)' },
  1007: { name: 'invalid_payload', reconnect: 'resume', meaning: 'Invalid payload: the client sent a text message that is not valid UTF-8' },
  1008: {
    name: 'policy_violation',
    reconnect: 'resume',
    meaning: 'Policy violation: the client sent more messages than WS_CLIENT_MESSAGES_PER_S (bursts of WS_CLIENT_MESSAGE_BURST), or the connections of its address together more than WS_ADDRESS_MESSAGES_PER_S (its upgrades are then refused a while)',
  },
  1009: {
    name: 'message_too_big',
    reconnect: 'resume',
    meaning: 'Message too big: the client sent a message over four times WS_CLIENT_MESSAGE_MAX_BYTES (one over the bound itself is answered payload_too_large)',
  },
  1011: { name: 'internal_error', reconnect: 'resume', meaning: 'Internal error: the gateway could not open the stream for this connection; reconnect after a backoff' },
  4000: { name: 'client_reconnect', reconnect: 'resume', meaning: 'Closed by the client library itself to reconnect (a half-open socket, a failed backfill)' },
  4008: {
    name: 'slow_consumer',
    reconnect: 'resume',
    meaning:
      'Slow consumer: what was left unsent to it (live frames, answers to its messages, pongs to its pings) passed WS_CLIENT_BUFFER_BYTES (a since= replay is paced and never counts); reconnect with ?since=<last seq>',
  },
  4011: {
    name: 'stream_reset',
    reconnect: 'reset',
    meaning: 'Stream reset: the engine history was replaced (connections without control messages); discard state, bootstrap from REST and reconnect without since',
  },
} as const satisfies Record<number, CloseCode>;
export type CloseCodeNumber = keyof typeof CLOSE_CODES;

/** The rule after a close with `code`; a code not listed (1006: the network dropped) resumes. */
export function reconnectRuleOf(code: number): ReconnectRule {
  return (CLOSE_CODES as Record<number, CloseCode>)[code]?.reconnect ?? 'resume';
}
