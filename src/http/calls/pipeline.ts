// The one pipeline every client call goes through, whichever way it came (docs/trading.md "One
// pipeline"): built once by the composition root (app.ts), given the trading parts by the trading
// routes, used by the REST adapter (rest.ts) and the socket adapter (stream-messages.ts).
//
//   shape    the transport checked the call against its declared schema; `shape` adds what a schema
//            cannot say (400 before any budget is spent)
//   charge   the address budget, the call's declared weight (less what the transport already spent),
//            and the held party's when the call declares the held party pays
//   verify, admit, send, explain
//            the call's handler: the verified-forward of its engine route (trading/forward.ts
//            routeCall: signature verified in auth/, the party it proves charged, the admission —
//            a client order id claimed —, the engine call, the answer judged and explained), or the
//            desk's cores (batch.ts, replace.ts, dead-mans-switch.ts), or a lookup
//
// What the call answers is put on the wire by the adapter that carried it.
import type { ClientCallDocument } from '../../contracts/declarations.js';
import { ApiError } from '../errors.js';
import { EngineShareExhaustedError } from '../../engine/errors.js';
import type { CallContext, CallEnv, CallResult, ClientCall } from './declaration.js';
import { CallMessages } from './messages.js';
import type { CallParts } from './parts.js';
import type { ConnectionScope } from './connection.js';
import { KeyedOrder } from '../trading/switch-firing.js';

export class CallPipeline {
  /** Set by the trading routes when they are registered; null: every trading call is 404. */
  parts: CallParts | null = null;
  /** The socket's reader of these calls' messages. */
  readonly messages: CallMessages;
  /** The per-key ordered lanes of calls that declare one (`budget.ordered`). */
  private readonly ordered = new KeyedOrder();

  constructor(readonly calls: readonly ClientCall[]) {
    this.messages = new CallMessages(calls);
  }

  /** The calls' documented faces (OpenAPI is made from their routes, AsyncAPI from these). */
  get documents(): readonly ClientCallDocument[] {
    return this.calls;
  }

  private trading(): CallParts {
    if (!this.parts) throw new ApiError('not_found', 'this gateway has no trading routes');
    return this.parts;
  }

  async run<In>(call: ClientCall<In>, input: In, ctx: CallContext, connection: ConnectionScope | null = null): Promise<CallResult> {
    call.shape?.(input);
    // Entered before the first await: the order of the lane is the order the calls reached the
    // pipeline (the socket's reader calls run synchronously, message by message), and the charge is
    // made inside it, so a call's budget is spent in the order the calls are applied.
    const key = call.budget.ordered?.(input);
    if (key !== undefined) return this.ordered.run(key, () => this.charged(call, input, ctx, connection));
    return this.charged(call, input, ctx, connection);
  }

  /** Charge, then the call's handler. */
  private async charged<In>(call: ClientCall<In>, input: In, ctx: CallContext, connection: ConnectionScope | null): Promise<CallResult> {
    // A call handing the engine more calls than the address's share has room for is refused whole,
    // before anything is charged or verified (ADR 0365; REST's door did the same before the body's check).
    const engineCalls = call.budget.engineCalls?.(input) ?? 0;
    if (engineCalls > 0) {
      const room = this.trading().desk.engineRoom?.(ctx.ip);
      if (room !== undefined && room < engineCalls) throw new EngineShareExhaustedError(engineCalls);
    }
    const weight = call.budget.weight(input);
    if (weight > ctx.addressCharged) {
      // At once, not one after the other: with the fleet's Redis store each unit is a round trip.
      const { budgets } = this.trading();
      const lefts = await Promise.all(Array.from({ length: weight - ctx.addressCharged }, () => budgets.address(ctx.ip)));
      ctx.addressLeft = lefts.reduce((a, b) => (b.remaining < a.remaining ? b : a));
      ctx.addressCharged = weight;
    }
    const held = ctx.heldParty;
    if (call.budget.party === 'held' && held !== undefined && weight > 0) {
      const { budgets } = this.trading();
      await Promise.all(Array.from({ length: weight }, () => budgets.party(held)));
    }
    const trading = () => this.trading();
    const env: CallEnv = {
      get trading() {
        return trading();
      },
      get send() {
        const forward = trading().forwards.get(call);
        if (!forward) throw new Error(`call ${call.op ?? call.rest?.url}: no engine route declared`);
        return forward;
      },
      connection,
    };
    return call.handle(input, env, ctx);
  }
}
