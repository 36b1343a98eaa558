// Requests of one client address in progress in the trading scope, bounded at the door
// (TRADING_ADDRESS_IN_PROGRESS; docs/trading.md "A fair share of the engine", ADR 0310). The engine's
// fair share (fair-share.ts) orders the engine calls, but everything before them — reading
// and parsing a body, checking its shape, charging the budgets, verifying a signature, judging a
// batch's room — runs first come, first served on the one event loop: 240 batches sent at once by
// one address were all parsed and judged before another address's order, which waited for them
// (bench:isolation, "engine-pool burst"). Past the bound a request is refused in the onRequest hook,
// before its body is read, with a body made once (no error object, no stack). The refusals are
// written a few per turn of the event loop (REFUSALS_PER_TURN), not all in the turn their requests
// arrived in: each write to a loopback peer can hand it the CPU, and a burst's 200 refusals written
// at once held the loop for as long (the victim's pong 0.5 s later); in between, the loop reads the
// other addresses' requests. Counted from onRequest until its response is finished or its
// connection closed, whichever first.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addressGroup } from '../../client-address.js';
import { InProgress } from '../in-progress.js';

/** Refusals written per turn of the event loop; the rest wait for the next turn (setImmediate). */
export const REFUSALS_PER_TURN = 8;

export interface AddressGate {
  /** Requests of `address` (already grouped) in progress now. */
  held(address: string): number;
}

/** The refusal's body: the gateway's `{error, code}` with the budget named, as the other budgets' refusals. */
export function gateRefusal(bound: number): string {
  return JSON.stringify({
    error: `this client address already has ${bound} trading requests in progress (TRADING_ADDRESS_IN_PROGRESS); retry once one is answered`,
    code: 'budget_exhausted',
    budget: 'requests_in_progress',
    retryAfterS: 1,
  });
}

/**
 * Writes refusals a few per turn of the event loop (REFUSALS_PER_TURN), never in the turn their
 * requests arrived in, with a body made once by the caller (no error object, no stack). A request
 * handed to it goes no further: the hook that hands it over calls neither done() nor anything else.
 * Shared by the gate and the engine room's door (calls/rest.ts).
 */
export function pacedRefusals(): (reply: FastifyReply, status: number, body: string) => void {
  const refusing: Array<{ reply: FastifyReply; status: number; body: string }> = [];
  let head = 0;
  let scheduled = false;
  const refuseSome = () => {
    const end = Math.min(refusing.length, head + REFUSALS_PER_TURN);
    for (; head < end; head++) {
      const { reply, status, body } = refusing[head]!;
      if (!reply.sent && !reply.raw.destroyed) void reply.code(status).header('retry-after', '1').type('application/json; charset=utf-8').send(body);
    }
    if (head < refusing.length) {
      setImmediate(refuseSome);
      return;
    }
    refusing.length = 0;
    head = 0;
    scheduled = false;
  };
  return (reply, status, body) => {
    refusing.push({ reply, status, body });
    if (!scheduled) {
      scheduled = true;
      setImmediate(refuseSome);
    }
  };
}

/**
 * Installs the gate on the scope `app` (its routes only). `bound` 0 disables it. Registered before
 * the rate limit's hook: a refused request costs nothing of the address's budget, and nothing more
 * than this check of the gateway.
 */
export function installAddressGate(app: FastifyInstance<any, any, any, any, any>, bound: number): AddressGate {
  const inProgress = new InProgress();
  const held = (address: string) => inProgress.held(address);
  if (bound <= 0) return { held };
  const refusal = gateRefusal(bound);
  const refuse = pacedRefusals();
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    const release = inProgress.enter(addressGroup(request.ip), bound);
    if (release === null) {
      // Neither done() nor an answer now: the request goes no further, and is answered in its turn.
      refuse(reply, 429, refusal);
      return;
    }
    // 'close' comes once, when the response is finished or the connection is gone before it.
    reply.raw.once('close', release);
    done();
  });
  return { held };
}
