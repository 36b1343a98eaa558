// One client call, declared once (docs/trading.md "One pipeline"): what it is on the wire (its
// socket message and REST route, their schemas, for parsing and for the OpenAPI and AsyncAPI
// documents), what it costs (its weight in the budgets, who pays), which per-connection queue
// (lane) it waits in on the socket, and its handler. The socket adapter (stream-messages.ts) and
// the REST adapter (rest.ts) read these fields and nothing else; every call then goes through the
// one pipeline (pipeline.ts): shape → verify → charge → admit → send → explain.
import type { FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { TSchema } from 'typebox';
import type { RouteCall } from '../trading/forward.js';
import type { ClientCallDocument } from '../../contracts/declarations.js';
import type { DeskContext } from '../trading/batch.js';
import type { PassedAnswer } from '../trading/relay.js';
import type { LaneName } from './lanes.js';
import type { CallParts } from './parts.js';
import type { ConnectionScope } from './connection.js';
import type { MessageId } from '../../stream/client-messages.js';

/**
 * How a call arrived: the client address (the budgets' key), the request id forwarded to the engine,
 * the units of the address budget the transport already spent (REST: 1, in the limiter's onRequest
 * hook; the socket: 0), what the charge left (REST's RateLimit-* headers), and the party the
 * transport proved the caller holds (the party scope on REST, the connection's parties on the socket).
 */
export interface CallContext extends DeskContext {
  heldParty?: string;
}

/** What a handler has to work with: the trading parts (404 when the gateway has none), and the connection on the socket. */
export interface CallEnv {
  readonly trading: CallParts;
  /** The call's own verified-forward to its declared engine route (`engine`). */
  readonly send: RouteCall;
  readonly connection: ConnectionScope | null;
}

/**
 * The engine route a signed call is forwarded to. The trading routes build its verified-forward
 * once (trading/forward.ts routeCall): shape (the body's schema) → verify (auth/) and charge the
 * party it proves → admit → send → explain (the engine's answer judged; an order that ended at once
 * given its reason).
 */
export interface EngineRoute {
  /** `METHOD /path` as the metrics label it and refusals name it. */
  readonly route: string;
  /** The signed body's schema (trading/body-shape.ts): a body not of this shape is 400 `invalid_body`, nothing sent. */
  readonly body?: TSchema;
  /** A place's admission: its client order id, neither known nor claimed by the party, claimed (client-order-ids.ts). */
  readonly admit?: 'client-order-id';
  /** A 2xx `cancelled` place answer waits briefly for why the order ended (`reason`). */
  readonly explain?: 'ended-at-once';
}

/**
 * A call's outcome before it is put on a wire: an engine answer as the proxy relays it (bytes and
 * status; the socket parses it), a value the gateway made (JSON), or what was already sent (a
 * subscribe's `stream.ack`, which the hub writes in its place among the frames: `answered` names it
 * for the metrics; null when nothing was, the connection being gone).
 */
export type CallResult = { readonly relayed: PassedAnswer } | { readonly value: object } | { readonly answered: string | null };

export interface CallBudget<In> {
  /** Units of the client address's budget (RATE_LIMIT_IP_MAX), charged before the handler runs. */
  readonly weight: (input: In) => number;
  /**
   * Who pays the party budget (RATE_LIMIT_MAX), `weight` units: the party the call's signature
   * proves, once the gateway has verified it (the handler's verified-forward charges it); the
   * party the transport proved held (the pipeline charges it); or nobody.
   */
  readonly party: 'signature' | 'held' | 'none';
  /**
   * The key of a per-key ordered lane (the dead man's switch: its party and name): calls with one
   * key are charged and handled one after the other, in the order they reached the pipeline, across
   * connections of this replica, so the budget is spent in the order the calls are applied.
   */
  readonly ordered?: (input: In) => string;
  /**
   * Engine calls the call hands the engine's fair share at once (a batch: its items). When the
   * client address's room in its share (ENGINE_ADDRESS_IN_FLIGHT + ENGINE_ADDRESS_QUEUE less what it
   * holds) is smaller, the call is refused whole, 429 `budget_exhausted` (`engine_calls`), before
   * its weight is charged or any signature checked: by the pipeline, and on REST at the door, right
   * after the body is parsed and before it is checked (rest.ts; ADR 0365). It must not throw on an
   * input that is not yet checked (answer 0: the schema's check then refuses it).
   */
  readonly engineCalls?: (input: In) => number;
}

/** The REST face of a call: its OpenAPI schema and how its input is read from a request. */
export interface RestRoute<In> {
  /** Fastify's schema (tags, summary, operationId, description, security, body/params, response): the OpenAPI operation. */
  readonly schema: FastifySchema & Record<string, unknown>;
  /** trading: the trading scope (the address budget's hook); party: also the party scope's guards (a `/v1/users/:party/...` route). */
  readonly scope: 'trading' | 'party';
  /** How the body is checked: not by Fastify (the signed bytes are checked by the handler), or strictly, without coercion. */
  readonly validation: 'handler' | 'strict' | 'fastify';
  readonly preValidation?: (request: FastifyRequest) => Promise<void>;
  readonly input: (request: FastifyRequest) => In;
  /** A reply of its own (default: a relayed answer as the engine's bytes, a value as JSON). */
  readonly send?: (reply: FastifyReply, result: CallResult) => FastifyReply;
}

export interface ClientCall<In = any> extends ClientCallDocument {
  readonly budget: CallBudget<In>;
  /** The socket's queue this call waits in (lanes.ts); refused `rate_limited` when full. */
  readonly lane: LaneName;
  /** The party the call acts for, which a socket connection must hold (403 otherwise); absent: its signature says. */
  readonly heldParty?: (input: In) => string;
  /** Socket: the message, already checked against `message`, read into the input. */
  readonly fromMessage?: (message: Record<string, unknown>, id: MessageId) => In;
  /** Socket: judged on the raw value before the schema (a check whose message says more than the schema's). */
  readonly beforeSchema?: (value: unknown) => void;
  /** Checks of the input the schema cannot express: refused (400) before any budget is spent. */
  readonly shape?: (input: In) => void;
  readonly route?: RestRoute<In>;
  /** The engine route of a signed call that is forwarded alone (its handler sends through `env.send`). */
  readonly engine?: EngineRoute;
  readonly handle: (input: In, env: CallEnv, ctx: CallContext) => Promise<CallResult>;
}

/** Declares a call (only to infer its input type once, for every field that takes it). */
export const declareCall = <In>(call: ClientCall<In>): ClientCall<In> => call;
