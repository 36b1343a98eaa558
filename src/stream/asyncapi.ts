// AsyncAPI 3.0 description of /v1/stream, derived from the declarations: every frame kind and
// control message the gateway sends (frame-kinds.ts) and every call a client may send (the trading
// pipeline's call documents, passed in: they are declared in http/, above this layer). Nothing here
// lists a kind or an op of its own. Served at /docs/asyncapi.json.
import type { ClientCallDocument } from '../contracts/declarations.js';
import { CANDLE_INTERVALS, DOMAIN_KINDS, PASSTHROUGH_KINDS } from '../contracts/frame.js';
import { CLOSE_CODES } from './close-codes.js';
import { FRAME_KIND_DECLARATIONS } from './frame-kinds.js';

/** A plain JSON copy (TypeBox may carry non-JSON markers). */
const json = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));

/** `open_interest.update` → `openInterestUpdate`: an AsyncAPI message id. */
const messageId = (name: string): string => name.replace(/[._]([a-z])/g, (_, c: string) => c.toUpperCase());

interface DocumentedMessage {
  readonly name: string;
  readonly summary: string;
  readonly schema: unknown;
}

/** What the gateway sends: one message per domain kind and control message, in declaration order; the engine's kinds share one. */
function receivedMessages(): Record<string, DocumentedMessage> {
  const out: Record<string, DocumentedMessage> = {};
  for (const d of FRAME_KIND_DECLARATIONS) {
    if (d.origin !== 'passthrough') out[messageId(d.kind)] = { name: d.kind, summary: d.summary, schema: d.schema };
    else out.engineEvent ??= { name: 'engine event', summary: `Engine events forwarded unchanged: ${PASSTHROUGH_KINDS.join(', ')}. ${d.summary}`, schema: d.schema };
  }
  return out;
}

/** What a client sends on an open connection: each call that has a socket op. */
function sentMessages(calls: readonly ClientCallDocument[]): Record<string, DocumentedMessage> {
  const out: Record<string, DocumentedMessage> = {};
  for (const c of calls) if (c.op !== null && c.message !== null) out[messageId(c.op)] = { name: c.op, summary: c.summary, schema: c.message };
  return out;
}

/** The AsyncAPI document of /v1/stream, for the calls the trading pipeline declares. */
export function buildAsyncApi(calls: readonly ClientCallDocument[]): Record<string, unknown> {
  const received = receivedMessages();
  const sent = sentMessages(calls);
  const messages: Record<string, unknown> = {};
  for (const [id, m] of [...Object.entries(received), ...Object.entries(sent)]) {
    messages[id] = { name: m.name, title: m.name, summary: m.summary, contentType: 'application/json', payload: json(m.schema) };
  }
  const refs = Object.fromEntries([...Object.keys(received), ...Object.keys(sent)].map((id) => [id, { $ref: `#/components/messages/${id}` }]));
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Trading gateway live stream',
      version: '1.0.0',
      description: [
        'One WebSocket per client at `/v1/stream`. Every message is a JSON text frame.',
        '',
        `Domain frames: ${DOMAIN_KINDS.join(', ')}. Engine passthrough kinds: ${PASSTHROUGH_KINDS.join(', ')}.`,
        '',
        'Filters (query, comma lists or repeated): `kinds`; `markets` (exact symbols; when none of them is a market the engine',
        'knows, the filter is ignored and every market is sent — judged again for open connections whenever the engine market',
        'list loads or changes; frames without a market are never filtered by it);',
        `\`intervals\` (${CANDLE_INTERVALS.join(', ')}; narrows candle.* only); \`party\` (opt-in for user-scoped frames: position.update,`,
        'balance.update and engine events that carry `party`; without it a connection receives public frames only).',
        'Unless AUTH_DISABLED, a `party` filter needs proof in the query: `user`, `sessionId`, `sig` = `<tsMs>.<hex>`, an ed25519',
        'signature by the session key over `GET\\n/v1/stream\\n<tsMs>\\n` (±30 s, single use); a party other than `user` is 403.',
        '',
        'Control messages (`stream.subscribed`, `stream.gap`, `stream.reset`, `stream.lagging`) are a gateway extension, not spec kinds, and are opt-in: they are',
        'sent only to a connection that passed `control=true` (true or false, else 400) or `since`. A client that passes',
        'neither receives only the spec kinds (domain frames and engine passthrough events).',
        '',
        'Behind the engine (fleet replicas): while the replica is more than STREAM_BEHIND_MAX_S behind the engine, control',
        'connections get `stream.lagging` every 2 s, then `lagging: false`; every connection stays open and gets the missing',
        'frames in order once the replica has caught up (never subscribed to silence, nothing lost).',
        '',
        'Replay: `since=<seq>` first sends the frames after that seq still held in memory (WS_HISTORY_SIZE frames), then live,',
        'with no gap or repeat. If the history does not reach back that far, a `stream.gap` message comes first: backfill from',
        '`/v1/events?since=<seq>`. The replay is paced by the client\'s own reading; only live frames count against the',
        'slow-consumer bound.',
        '',
        'Epochs: `stream.subscribed` carries `epoch`, the identity of the engine history (the same on every gateway replica), and',
        '`headSeq`. Resume with `since=<last seq>&epoch=<epoch>`: from another epoch the connection gets `stream.reset`',
        '(epoch_mismatch) and is served as a fresh one (snapshot frames, then live; no replay). When the engine history is',
        'replaced while connected, control connections get `stream.reset` (history_replaced); the others are closed with 4011.',
        '',
        'State on subscribe: unless `snapshot=false`, before any live frame a connection receives the latest orderbook.snapshot',
        'of each admitted market, the open candle.update of each admitted market × interval and, per party, one position.update',
        'per open position and one balance.update — ordinary frames with `"snapshot": true` in the envelope, filtered like any',
        'frame; their seq is the seq they are current as of. After a since= replay they come after the replayed frames.',
        '',
        '`heartbeat=N` (1..300 seconds): a `stream.heartbeat` every N seconds (no `control` needed).',
        '',
        'Refused upgrades are plain HTTP answers with `{"error","code"}`: 400 bad filter or unknown query parameter, 401',
        'missing/invalid proof (outside ±30 s: the body adds `serverTime`), 403 party not proven, 429 too many streams from',
        'this address (WS_MAX_CONNECTIONS_PER_IP), 503 connection limit or shutting down. A plain HTTP GET of the same URL',
        'runs the same checks and answers the same refusal, or 426 when the upgrade would be accepted (browsers hide the',
        'status of a refused upgrade). Liveness: the gateway pings; only a pong echoing its payload counts.',
        '',
        'Talking to the socket: a client may send JSON text messages `{"op", "id", …}` (operation sendStream): `subscribe` /',
        '`unsubscribe` change the connection\'s filters and are answered by `stream.ack` (the filters as applied; after a',
        'subscribe, the snapshot frames of what was added, then its live frames); `order.place` / `order.cancel` carry a',
        'signed REST call (the body and the `user`, `sessionId`, `sig` values of its signing headers), verified and forwarded',
        'exactly as REST does (one replay memory, one rate limit), answered by `stream.answer` (the engine\'s answer);',
        '`order.batch` / `order.replace` carry the body of POST /v1/orders/batch and /v1/orders/replace (each item signed as alone). Any',
        'refusal is a `stream.error` with the REST code, its status and the message\'s id. A list in a message names at most',
        '100 values; a message over WS_CLIENT_MESSAGE_MAX_BYTES is answered `payload_too_large`, one over four times that',
        'closes the connection (1009); more than WS_CLIENT_MESSAGES_PER_S (bursts WS_CLIENT_MESSAGE_BURST) closes it (1008).',
        'A subscribe adds to a list; on a list the URL left open (every kind / market / interval) it sets it: a connection',
        'receives what it subscribed to. Markets named by a message must be listed by the engine (`unknown_market`), never',
        'ignored as rule 1 ignores the URL\'s. A client that sends nothing receives exactly what it did before.',
        '',
        `Close codes: ${Object.entries(CLOSE_CODES).map(([c, d]) => `${c} — ${d.meaning} (after it a client should: ${d.reconnect})`).join('; ')}.`,
        'Without ENGINE_ADMIN_TOKEN the gateway accepts connections and sends nothing (no control messages either).',
      ].join('\n'),
    },
    servers: {
      gateway: { host: 'localhost:4000', protocol: 'ws', description: 'This gateway (use wss behind https)' },
    },
    channels: {
      stream: {
        address: '/v1/stream',
        messages: refs,
        bindings: {
          ws: {
            method: 'GET',
            query: {
              type: 'object',
              properties: {
                kinds: { type: 'string', description: 'Comma list of frame kinds' },
                markets: { type: 'string', description: 'Comma list of market symbols' },
                intervals: { type: 'string', description: `Comma list of ${CANDLE_INTERVALS.join(', ')}` },
                party: { type: 'string', description: 'Comma list of party ids' },
                since: { type: 'string', description: 'Replay after this seq (implies control messages)' },
                control: {
                  type: 'string',
                  enum: ['true', 'false'],
                  description: 'true: also send the control messages stream.subscribed, stream.gap and stream.reset; default false',
                },
                epoch: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'With since: the epoch of stream.subscribed the seq belongs to' },
                heartbeat: { type: 'integer', minimum: 1, maximum: 300, description: 'Seconds between stream.heartbeat frames' },
                snapshot: { type: 'string', enum: ['true', 'false'], description: 'false: no snapshot frames on subscribe; default true' },
                depth: { type: 'integer', minimum: 1, maximum: 1000, description: 'With kinds=orderbook.delta: levels per side of the book view; default 20' },
                compress: {
                  type: 'string',
                  enum: ['deflate', 'none'],
                  description:
                    'deflate: permessage-deflate for this connection, when the client offers it too (browsers do); frames under WS_DEFLATE_THRESHOLD_BYTES go uncompressed; default none',
                },
                throttle: {
                  type: 'integer',
                  enum: [0, 100, 500],
                  description:
                    'With kinds=orderbook.delta: at most one delta per 100 or 500 ms, conflating the changes between (bookSeq/prevBookSeq and checksum chain exact); default 0, every change',
                },
                group: {
                  type: 'string',
                  pattern: '^(none|sig:[2-5]|tick:[0-9]{1,12}(\\.[0-9]{1,10})?)$',
                  description: 'With kinds=orderbook.delta: price grouping, sig:N significant figures or tick:T multiples (bids down, asks up); default none',
                },
                user: { type: 'string' },
                sessionId: { type: 'string' },
                sig: { type: 'string' },
              },
            },
          },
        },
      },
    },
    operations: {
      receiveStream: {
        action: 'receive',
        channel: { $ref: '#/channels/stream' },
        summary: 'Frames the gateway sends',
        messages: Object.keys(received).map((id) => ({ $ref: `#/channels/stream/messages/${id}` })),
      },
      sendStream: {
        action: 'send',
        channel: { $ref: '#/channels/stream' },
        summary: 'Messages a client sends on an open connection (each answered by stream.ack, stream.answer or stream.error with its id)',
        messages: Object.keys(sent).map((id) => ({ $ref: `#/channels/stream/messages/${id}` })),
      },
    },
    components: { messages },
  };
}
