// AsyncAPI 3.0 description of /v1/stream, generated from the same TypeBox schemas the frames are
// checked against in tests (schemas.ts). Served at /docs/asyncapi.json.
import { CANDLE_INTERVALS, DOMAIN_KINDS, PASSTHROUGH_KINDS } from '../projections/types.js';
import {
  BalanceUpdateFrame,
  CandleCloseFrame,
  CandleUpdateFrame,
  CLOSE_CODES,
  GapMessage,
  OrderbookSnapshotFrame,
  PassthroughFrame,
  PositionUpdateFrame,
  SubscribedMessage,
  TradeFrame,
} from './schemas.js';

/** A plain JSON copy (TypeBox may carry non-JSON markers). */
const json = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));

const MESSAGES = {
  positionUpdate: { schema: PositionUpdateFrame, name: 'position.update', summary: 'Position epoch after a fill leg (user-scoped: needs `party`). Filter: party, markets.' },
  balanceUpdate: { schema: BalanceUpdateFrame, name: 'balance.update', summary: 'Cash balance after a fill leg (user-scoped: needs `party`). Filter: party.' },
  trade: { schema: TradeFrame, name: 'trade', summary: 'One per match, public. Filter: markets.' },
  orderbookSnapshot: { schema: OrderbookSnapshotFrame, name: 'orderbook.snapshot', summary: 'Full book, when it changed. Filter: markets.' },
  candleUpdate: { schema: CandleUpdateFrame, name: 'candle.update', summary: 'Open bucket after a match. Filter: markets, intervals.' },
  candleClose: { schema: CandleCloseFrame, name: 'candle.close', summary: 'Exactly once per bucket. Filter: markets, intervals.' },
  engineEvent: {
    schema: PassthroughFrame,
    name: 'engine event',
    summary: `Engine events forwarded unchanged: ${PASSTHROUGH_KINDS.join(', ')}. Filter: kinds, markets, and party when they carry one.`,
  },
  streamSubscribed: {
    schema: SubscribedMessage,
    name: 'stream.subscribed',
    summary: 'Control, opt-in (control=true or since): first message, the filters in effect; sent again when rule 1 changes them.',
  },
  streamGap: {
    schema: GapMessage,
    name: 'stream.gap',
    summary: 'Control, replay clients (since) only: `since` is older than the replay history; backfill from /v1/events.',
  },
} as const;

export function buildAsyncApi(): Record<string, unknown> {
  const messages: Record<string, unknown> = {};
  for (const [id, m] of Object.entries(MESSAGES)) {
    messages[id] = { name: m.name, title: m.name, summary: m.summary, contentType: 'application/json', payload: json(m.schema) };
  }
  const refs = Object.fromEntries(Object.keys(MESSAGES).map((id) => [id, { $ref: `#/components/messages/${id}` }]));
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
        'Control messages (`stream.subscribed`, `stream.gap`) are a gateway extension, not spec kinds, and are opt-in: they are',
        'sent only to a connection that passed `control=true` (true or false, else 400) or `since`. A client that passes',
        'neither receives only the spec kinds (domain frames and engine passthrough events).',
        '',
        'Replay: `since=<seq>` first sends the frames after that seq still held in memory (WS_HISTORY_SIZE frames), then live,',
        'with no gap or repeat. If the history does not reach back that far, a `stream.gap` message comes first: backfill from',
        '`/v1/events?since=<seq>`.',
        '',
        'Refused upgrades are plain HTTP answers with `{"error","code"}`: 400 bad filter or unknown query parameter, 401',
        'missing/invalid proof (outside ±30 s: the body adds `serverTime`), 403 party not proven, 429 too many streams from',
        'this address (WS_MAX_CONNECTIONS_PER_IP), 503 connection limit or shutting down. A plain HTTP GET of the same URL',
        'runs the same checks and answers the same refusal, or 426 when the upgrade would be accepted (browsers hide the',
        'status of a refused upgrade). Liveness: the gateway pings; only a pong echoing its payload counts.',
        '',
        `Close codes: ${Object.entries(CLOSE_CODES).map(([c, d]) => `${c} — ${d}`).join('; ')}.`,
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
                control: { type: 'string', enum: ['true', 'false'], description: 'true: also send the control messages stream.subscribed and stream.gap; default false' },
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
        messages: Object.keys(MESSAGES).map((id) => ({ $ref: `#/channels/stream/messages/${id}` })),
      },
    },
    components: { messages },
  };
}
