// The messages a client sends on an open /v1/stream connection (docs/stream.md "Talking to the
// socket"), read (src/stream/client-messages.ts), checked and answered here, at the edge:
//
//   subscribe / unsubscribe   → `stream.ack` {filters as applied}, then the snapshot frames of what was added
//   order.place / order.cancel → `stream.answer` {status, body}: the engine's 2xx answer, as REST relays it
//   order.batch / order.replace → `stream.answer` {status: 200, body}: every item's outcome, as REST answers it
//   anything refused          → `stream.error` {code, error, status, …}: the code REST would answer
//
// Every answer carries the message's `id` and `op`. Domain errors become socket errors in one
// place (`errorMessage`), through the same mapping as REST (`fromDomainError`), so a refusal has
// the same code on both. Subscription changes of one connection are applied one after the other,
// after its opening (at most MAX_PENDING_CHANGES waiting); orders run concurrently (at most
// MAX_PENDING_ORDERS per connection), and so do the dead man's switch calls (MAX_PENDING_SWITCH_CALLS)
// and order.status lookups (MAX_PENDING_LOOKUPS): every request waits in a counted queue.
import { randomUUID } from 'node:crypto';
import type { ClientMessageHandlers } from '../stream/hub.js';
import type { StreamClient } from '../stream/client.js';
import { control } from '../stream/control.js';
import {
  messageIdOf,
  messageOpOf,
  parseClientMessage,
  MalformedMessageError,
  type ClientMessage,
  type ClientOp,
  type MessageId,
  type SubscribeMessage,
  type UnsubscribeMessage,
} from '../stream/client-messages.js';
import { appliedFilters, applySubscribe, applyUnsubscribe } from '../stream/subscription-change.js';
import { snapshotReads } from '../stream/user-snapshot.js';
import type { Subscription } from '../stream/subscription.js';
import { ApiError, fromDomainError } from './errors.js';
import { proveParties, type UpgradeContext } from './stream-upgrade.js';
import type { TradingSlot } from './trading/socket-calls.js';
import type { PassedAnswer } from './trading/relay.js';

/** Orders of one connection awaiting the engine at once; more are refused (`rate_limited`) until one is answered. */
export const MAX_PENDING_ORDERS = 32;

/**
 * Subscription changes of one connection waiting at once (they run one after the other, and one
 * may wait for its snapshot's reads: the engine's live orders, the database); more are refused
 * (`rate_limited`) until one is answered. Without it a slow engine let the queue grow by the
 * message rate for as long as it was slow, and answered changes minutes late.
 */
export const MAX_PENDING_CHANGES = 32;

/**
 * Dead man's switch calls (switch.arm / heartbeat / disarm) of one connection awaiting the switch
 * store at once (Redis for a fleet); more are refused (`rate_limited`) until one is answered. A
 * bound of their own: a heartbeat is never refused because the connection's orders or lookups wait
 * (a refused heartbeat lets the switch fire).
 */
export const MAX_PENDING_SWITCH_CALLS = 32;

/** order.status lookups of one connection awaiting at once (budgets, the database mirror); more are refused (`rate_limited`). */
export const MAX_PENDING_LOOKUPS = 32;

export interface MessageContext extends UpgradeContext {
  trading: TradingSlot;
  /** The inbound bound's maxBytes (for the answer to a message over it). */
  maxBytes: number;
}

type Answer = Record<string, unknown>;

function answer(kind: string, head: number | null, id: MessageId | null, op: ClientOp | null, payload: Record<string, unknown>): Answer {
  return { ...control(kind, head ?? 0, payload), id, op };
}

/** The one mapping of a refusal to its socket message: the REST code, status and extra fields. */
export function errorMessage(err: unknown, head: number | null, id: MessageId | null, op: ClientOp | null, log: (err: unknown) => void): Answer {
  let known = err instanceof MalformedMessageError ? new ApiError('bad_request', err.message) : fromDomainError(err);
  if (!known) {
    log(err);
    known = new ApiError('internal_error', 'the message could not be handled');
  }
  return answer('stream.error', head, id, op, { ...known.body(), status: known.status, ...(known.retryAfter !== undefined ? { retryAfter: known.retryAfter } : {}) });
}

/** The id and op of a message that could not be read, as far as they can be. */
function idAndOp(text: string): { id: MessageId | null; op: ClientOp | null } {
  try {
    const value: unknown = JSON.parse(text);
    return { id: messageIdOf(value), op: messageOpOf(value) };
  } catch {
    return { id: null, op: null };
  }
}

const SETTLED: Promise<void> = Promise.resolve();

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
  /** The subscription changes, one after the other (the shared settled promise until the first). */
  private changes: Promise<void> = SETTLED;
  private pendingOrders = 0;
  private pendingChanges = 0;
  private pendingSwitchCalls = 0;
  private pendingLookups = 0;

  constructor(
    private readonly ctx: MessageContext,
    private readonly ip: string,
    private readonly address: string,
  ) {}

  private log(err: unknown): void {
    this.ctx.deps.logger.warn({ err }, 'stream message failed');
  }

  private count(op: ClientOp | null, answer: string): void {
    this.ctx.metrics.clientMessages.inc({ op: op ?? 'invalid', answer });
  }

  private send(client: StreamClient, message: Answer): void {
    this.count(message.op as ClientOp | null, message.kind === 'stream.error' ? String((message.payload as { code?: unknown }).code) : String(message.kind).slice('stream.'.length));
    this.ctx.hub.reply(client, message);
  }

  private refuse(client: StreamClient, err: unknown, id: MessageId | null, op: ClientOp | null): void {
    this.send(client, errorMessage(err, this.ctx.hub.head(), id, op, (e) => this.log(e)));
  }

  private async change(client: StreamClient, message: SubscribeMessage | UnsubscribeMessage): Promise<void> {
    const { ctx } = this;
    // After the opening: its snapshot and replay were made for the URL's filters.
    if (client.opening && !(await client.opening.catch(() => false))) return;
    if (client.closing) return;
    let next: Subscription;
    let snapshot = false;
    if (message.op === 'subscribe') {
      // Only the parties this message adds need its proof; those held were proven before.
      await proveParties((message.lists.party ?? []).filter((p) => !client.sub.parties.has(p)), message.proof, ctx.deps, () =>
        ctx.budgets.spend('session_lookups', this.address),
      );
      next = applySubscribe(client.sub, message, ctx.knownMarkets());
      if (next.book !== client.sub.book) ctx.admitBookView?.(next.book);
      snapshot = message.snapshot ?? client.sub.snapshot;
      // The snapshot reads every held party's user channels again: charged before, refused whole past the budget.
      await ctx.budgets.spend('snapshot_reads', this.address, snapshotReads(next, snapshot));
    } else {
      next = applyUnsubscribe(client.sub, message, ctx.knownMarkets());
    }
    await ctx.hub.resubscribe(client, next, (sub, head) => answer('stream.ack', head, message.id, message.op, appliedFilters(sub)), snapshot);
    this.count(message.op, 'ack');
  }

  private async order(client: StreamClient, message: ClientMessage & { op: 'order.place' | 'order.cancel' | 'order.batch' | 'order.replace' }): Promise<void> {
    const { ctx } = this;
    const calls = ctx.trading.calls;
    if (!calls) throw new ApiError('not_found', 'this gateway has no trading routes');
    const callCtx = { ip: this.ip, requestId: randomUUID() };
    if (message.op === 'order.batch' || message.op === 'order.replace') {
      // The REST answer's body (every item's outcome); a refusal of the whole call throws (stream.error).
      const body = message.op === 'order.batch' ? await calls.batch(message, callCtx) : await calls.replace(message, callCtx);
      this.send(client, answer('stream.answer', ctx.hub.head(), message.id, message.op, { status: 200, body }));
      return;
    }
    const passed: PassedAnswer =
      message.op === 'order.place' ? await calls.placeOrder(message.body, message.signature, callCtx) : await calls.cancelOrder(message.orderId, message.signature, callCtx);
    let body: unknown;
    try {
      body = JSON.parse(passed.body.toString('utf8'));
    } catch {
      throw new ApiError('engine_unavailable', 'the engine answered with a body that is not JSON', { engineStatus: passed.status });
    }
    if (passed.status >= 200 && passed.status < 300) {
      this.send(client, answer('stream.answer', ctx.hub.head(), message.id, message.op, { status: passed.status, body }));
      return;
    }
    // A refusal the engine made in the gateway's error shape (REST relays it with its status): an error here too.
    const extra = passed.retryAfter !== undefined ? { retryAfter: passed.retryAfter } : {};
    this.send(client, answer('stream.error', ctx.hub.head(), message.id, message.op, { ...(body as object), status: passed.status, ...extra }));
  }

  message(data: Buffer, client: StreamClient): void {
    const text = data.toString('utf8');
    let message: ClientMessage;
    try {
      message = parseClientMessage(text);
    } catch (err) {
      const { id, op } = idAndOp(text);
      return this.refuse(client, err, id, op);
    }
    if (message.op === 'subscribe' || message.op === 'unsubscribe') {
      if (this.pendingChanges >= MAX_PENDING_CHANGES) {
        return this.refuse(client, new ApiError('rate_limited', `at most ${MAX_PENDING_CHANGES} subscription changes of one connection may wait at once`, { retryAfterS: 1 }), message.id, message.op);
      }
      this.pendingChanges++;
      this.changes = this.changes.then(() =>
        this.change(client, message)
          .catch((err: unknown) => this.refuse(client, err, message.id, message.op))
          .finally(() => this.pendingChanges--),
      );
      return;
    }
    if (message.op === 'switch.arm' || message.op === 'switch.heartbeat' || message.op === 'switch.disarm') {
      const calls = this.ctx.trading.calls;
      if (!calls) return this.refuse(client, new ApiError('not_found', 'this gateway has no trading routes'), message.id, message.op);
      if (!client.sub.parties.has(message.party)) {
        return this.refuse(client, new ApiError('forbidden', `${message.op} needs the party on this connection (subscribe to it with its proof first)`), message.id, message.op);
      }
      if (this.pendingSwitchCalls >= MAX_PENDING_SWITCH_CALLS) {
        return this.refuse(client, new ApiError('rate_limited', `at most ${MAX_PENDING_SWITCH_CALLS} switch calls of one connection may wait at once`, { retryAfterS: 1 }), message.id, message.op);
      }
      this.pendingSwitchCalls++;
      const name = message.name ?? 'default';
      const run =
        message.op === 'switch.arm'
          ? calls.switchArm({ party: message.party, sessionId: message.sessionId!, name, timeoutMs: message.timeoutMs!, cancels: message.cancels! }, { ip: this.ip, requestId: randomUUID() })
          : message.op === 'switch.heartbeat'
            ? calls.switchHeartbeat(message.party, name, { ip: this.ip, requestId: '' })
            : calls.switchDisarm(message.party, name, { ip: this.ip, requestId: '' });
      run
        .then((body) => this.send(client, answer('stream.answer', this.ctx.hub.head(), message.id, message.op, { status: 200, body: body as Record<string, unknown> })))
        .catch((err: unknown) => this.refuse(client, err, message.id, message.op))
        .finally(() => this.pendingSwitchCalls--);
      return;
    }
    if (message.op === 'order.status') {
      const calls = this.ctx.trading.calls;
      if (!calls) return this.refuse(client, new ApiError('not_found', 'this gateway has no trading routes'), message.id, message.op);
      // The party's orders are its own: only a connection holding the party (proven) may ask.
      if (!client.sub.parties.has(message.party)) {
        return this.refuse(client, new ApiError('forbidden', 'order.status needs the party on this connection (subscribe to it with its proof first)'), message.id, message.op);
      }
      if (this.pendingLookups >= MAX_PENDING_LOOKUPS) {
        return this.refuse(client, new ApiError('rate_limited', `at most ${MAX_PENDING_LOOKUPS} order.status lookups of one connection may wait at once`, { retryAfterS: 1 }), message.id, message.op);
      }
      this.pendingLookups++;
      calls
        .clientOrder(message.party, message.clientOrderId, { ip: this.ip, requestId: randomUUID() })
        .then((body) => this.send(client, answer('stream.answer', this.ctx.hub.head(), message.id, message.op, { status: 200, body: body as Record<string, unknown> })))
        .catch((err: unknown) => this.refuse(client, err, message.id, message.op))
        .finally(() => this.pendingLookups--);
      return;
    }
    if (this.pendingOrders >= MAX_PENDING_ORDERS) {
      return this.refuse(client, new ApiError('rate_limited', `at most ${MAX_PENDING_ORDERS} orders of one connection may await the engine at once`, { retryAfterS: 1 }), message.id, message.op);
    }
    this.pendingOrders++;
    this.order(client, message)
      .catch((err: unknown) => this.refuse(client, err, message.id, message.op))
      .finally(() => this.pendingOrders--);
  }

  oversize(data: Buffer, client: StreamClient): void {
    const { id, op } = idAndOp(data.toString('utf8'));
    this.refuse(client, new ApiError('payload_too_large', `the message is larger than ${this.ctx.maxBytes} bytes (WS_CLIENT_MESSAGE_MAX_BYTES)`), id, op);
  }
}
