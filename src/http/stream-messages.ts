// The socket adapter of the client calls (docs/stream.md "Talking to the socket"): the messages a
// client sends on an open /v1/stream connection, read into the call they name (calls/messages.ts,
// from the calls' declarations), run through the one pipeline (calls/pipeline.ts) and answered here:
//
//   subscribe / unsubscribe     → `stream.ack` {filters as applied}, then the snapshot frames of what was added
//   order.place / order.cancel  → `stream.answer` {status, body}: the engine's 2xx answer, as REST relays it
//   every other call            → `stream.answer` {status: 200, body}: what REST answers (every item's outcome, …)
//   anything refused            → `stream.error` {code, error, status, …}: the code REST would answer
//
// Every answer carries the message's `id` and `op`. Domain errors become socket errors in one
// place (`errorMessage`), through the same mapping as REST (`fromDomainError`), so a refusal has
// the same code on both. Each call waits in the per-connection lane it declares (calls/lanes.ts);
// a call acting for a party the connection must hold is refused 403 when it does not.
import { randomUUID } from 'node:crypto';
import type { ClientMessageHandlers } from '../stream/hub.js';
import type { StreamClient } from '../stream/client.js';
import { control } from '../stream/control.js';
import { MalformedMessageError, type MessageId } from '../stream/client-messages.js';
import { appliedFilters } from '../stream/subscription-change.js';
import type { Subscription } from '../stream/subscription.js';
import { ApiError, fromDomainError } from './errors.js';
import type { UpgradeContext } from './stream-upgrade.js';
import type { CallPipeline } from './calls/pipeline.js';
import type { CallContext, CallResult } from './calls/declaration.js';
import type { ReadMessage } from './calls/messages.js';
import { ConnectionLanes } from './calls/lanes.js';
import type { PassedAnswer } from './trading/relay.js';
import { readingAs } from '../db/read-share.js';

export { MAX_PENDING_CHANGES, MAX_PENDING_LOOKUPS, MAX_PENDING_ORDERS, MAX_PENDING_SWITCH_CALLS } from './calls/lanes.js';

export interface MessageContext extends UpgradeContext {
  calls: CallPipeline;
  /** The inbound bound's maxBytes (for the answer to a message over it). */
  maxBytes: number;
}

type Answer = Record<string, unknown>;

function answer(kind: string, head: number | null, id: MessageId | null, op: string | null, payload: Record<string, unknown>): Answer {
  return { ...control(kind, head ?? 0, payload), id, op };
}

/** The one mapping of a refusal to its socket message: the REST code, status and extra fields. */
export function errorMessage(err: unknown, head: number | null, id: MessageId | null, op: string | null, log: (err: unknown) => void): Answer {
  let known = err instanceof MalformedMessageError ? new ApiError('bad_request', err.message) : fromDomainError(err);
  if (!known) {
    log(err);
    known = new ApiError('internal_error', 'the message could not be handled');
  }
  return answer('stream.error', head, id, op, { ...known.body(), status: known.status, ...(known.retryAfter !== undefined ? { retryAfter: known.retryAfter } : {}) });
}

/** An engine answer relayed on the socket: 2xx as `stream.answer`, a refusal in the gateway's error shape as `stream.error`. */
function relayedAnswer(passed: PassedAnswer, head: number | null, id: MessageId, op: string): Answer {
  let body: unknown;
  try {
    body = JSON.parse(passed.body.toString('utf8'));
  } catch {
    throw new ApiError('engine_unavailable', 'the engine answered with a body that is not JSON', { engineStatus: passed.status });
  }
  if (passed.status >= 200 && passed.status < 300) return answer('stream.answer', head, id, op, { status: passed.status, body });
  // REST relays it with its status: an error here too.
  const extra = passed.retryAfter !== undefined ? { retryAfter: passed.retryAfter } : {};
  return answer('stream.error', head, id, op, { ...(body as object), status: passed.status, ...extra });
}

/** A socket call's context: its request id (forwarded to the engine as X-Request-Id) made only when a call reads it. */
class SocketCall implements CallContext {
  addressCharged = 0;
  heldParty?: string;
  private id: string | null = null;
  constructor(readonly ip: string) {}
  get requestId(): string {
    return (this.id ??= randomUUID());
  }
}

/**
 * The handlers of one connection, from the client address the upgrade saw: `ip` for the trading
 * budgets (as REST), `address` (IPv6 by /64) for the work budgets (as the connection caps).
 */
export function streamMessageHandlers(ctx: MessageContext, ip: string, address: string = ip): ClientMessageHandlers {
  return new ConnectionMessages(ctx, ip, address);
}

/**
 * One connection's messages: its state is these few fields, its code the class's methods (shared
 * by every connection: closures made per connection cost memory on every idle one).
 */
class ConnectionMessages implements ClientMessageHandlers {
  /** Made on the first call (an idle connection holds none). */
  private lanes: ConnectionLanes | null = null;

  constructor(
    private readonly ctx: MessageContext,
    private readonly ip: string,
    private readonly address: string,
  ) {}

  private log(err: unknown): void {
    this.ctx.deps.logger.warn({ err }, 'stream message failed');
  }

  private count(op: string | null, answer: string): void {
    this.ctx.metrics.clientMessages.inc({ op: op ?? 'invalid', answer });
  }

  private send(client: StreamClient, message: Answer): void {
    this.count(message.op as string | null, message.kind === 'stream.error' ? String((message.payload as { code?: unknown }).code) : String(message.kind).slice('stream.'.length));
    this.ctx.hub.reply(client, message);
  }

  private refuse(client: StreamClient, err: unknown, id: MessageId | null, op: string | null): void {
    this.send(client, errorMessage(err, this.ctx.hub.head(), id, op, (e) => this.log(e)));
  }

  /** Runs one read call through the pipeline and answers it (never rejects). */
  private async run(client: StreamClient, read: ReadMessage, ctx: CallContext): Promise<void> {
    const { id, op } = read;
    try {
      const ack = (sub: Subscription, head: number | null) => answer('stream.ack', head, id, op, appliedFilters(sub));
      const result: CallResult = await this.ctx.calls.run(read.call, read.input, ctx, { client, stream: this.ctx, address: this.address, ack });
      if ('answered' in result) {
        if (result.answered !== null) this.count(op, result.answered);
        return;
      }
      const head = this.ctx.hub.head();
      this.send(client, 'relayed' in result ? relayedAnswer(result.relayed, head, id, op) : answer('stream.answer', head, id, op, { status: 200, body: result.value }));
    } catch (err) {
      this.refuse(client, err, id, op);
    }
  }

  message(data: Buffer, client: StreamClient): void {
    const text = data.toString('utf8');
    const { messages } = this.ctx.calls;
    let read: ReadMessage;
    try {
      read = messages.read(text);
    } catch (err) {
      const { id, op } = messages.idAndOp(text);
      return this.refuse(client, err, id, op);
    }
    const { call, input, id, op } = read;
    const ctx: CallContext = new SocketCall(this.ip);
    try {
      const party = call.heldParty?.(input);
      if (party !== undefined) {
        // The party's calls are its own: only a connection holding the party (proven) may make them.
        if (!client.sub.parties.has(party)) throw new ApiError('forbidden', `${op} needs the party on this connection (subscribe to it with its proof first)`);
        ctx.heldParty = party;
      }
      // Its reads take the address's turn of the database pool (db/read-share.ts).
      (this.lanes ??= new ConnectionLanes()).enter(call.lane, () => readingAs({ address: this.address, party: ctx.heldParty ?? null }, () => this.run(client, read, ctx)));
    } catch (err) {
      this.refuse(client, err, id, op);
    }
  }

  oversize(data: Buffer, client: StreamClient): void {
    const { id, op } = this.ctx.calls.messages.idAndOp(data.toString('utf8'));
    this.refuse(client, new ApiError('payload_too_large', `the message is larger than ${this.ctx.maxBytes} bytes (WS_CLIENT_MESSAGE_MAX_BYTES)`), id, op);
  }
}
