// The declaration seam shared by the live path (frames, server → client) and the trading pipeline
// (client calls, client → server). Each frame kind and each client call is declared ONCE, as one of
// these values; everything else is derived from the lists:
//
//   FrameKindDeclaration[] (src/stream/frame-kinds.ts)  → the kind lists (domain, opt-in, party-scoped),
//                                                          subscription validation, AsyncAPI messages
//   ClientCallDeclaration[] (src/http/calls/)           → socket op parsing, REST routes, budgets and
//                                                          queues, OpenAPI operations, AsyncAPI messages
//
// The AsyncAPI builder (src/stream/asyncapi.ts) takes both lists as arguments; it never lists a kind
// or an op of its own. Adding a frame kind is one FrameKindDeclaration (+ the feature that makes it);
// adding a desk call is one ClientCallDeclaration, its handler and its tests.
import type { TSchema } from 'typebox';

/**
 * Who may receive a frame of a kind: everyone; only connections holding (and, with auth, proving)
 * its party; or, for engine events, the party's connections when the event carries one and everyone otherwise.
 */
export type FrameScope = 'public' | 'party' | 'party-when-present';

export interface FrameKindDeclaration {
  /** The wire `kind` (`orderbook.delta`). */
  readonly kind: string;
  /** The whole frame's schema; frames of this kind are checked against it in tests, and AsyncAPI shows it. */
  readonly schema: TSchema;
  /** One or two sentences for AsyncAPI and docs: what it is, when it is sent, its filters. */
  readonly summary: string;
  /**
   * true: sent only to a connection that names it in `kinds` (never part of "every kind"). Control
   * messages are never in a `kinds` filter: theirs is false, and `summary` says who gets them.
   */
  readonly optIn: boolean;
  readonly scope: FrameScope;
  /**
   * domain: made by the gateway's projections and features; passthrough: an engine event as the
   * engine sent it; control: the stream's own news and the answers to a client's messages (not spec kinds).
   */
  readonly origin: 'domain' | 'passthrough' | 'control';
}

/**
 * The documented face of one client call, as the pipeline declares it (the declaration itself, with
 * weight, budget, queue and handler, lives in http/; this is the part the stream's documents need).
 */
export interface ClientCallDocument {
  /** The socket op (`order.place`); null for a REST-only call. */
  readonly op: string | null;
  /** The REST route of the same call; null for a socket-only call (subscribe). */
  readonly rest: { readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE'; readonly url: string } | null;
  readonly summary: string;
  /** The socket message's schema (op, id and the call's own fields); null for a REST-only call. */
  readonly message: TSchema | null;
  /** The 2xx answer body's schema (REST body; `stream.answer` payload.body). */
  readonly answer: TSchema | null;
}
