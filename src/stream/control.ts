// The stream's control messages (not spec kinds; only for connections that opted in with
// control=true or since): stream.subscribed, stream.gap, stream.reset, stream.heartbeat. Made here
// for the opening of a connection (opening.ts) and for the hub's messages to open ones (hub.ts).
import type { Subscription } from './subscription.js';

export type ResetReason = 'epoch_mismatch' | 'history_replaced';

export function control(kind: string, seq: number, payload: Record<string, unknown>): Record<string, unknown> {
  return { kind, seq, ts: new Date().toISOString(), payload };
}

export const json = (message: Record<string, unknown>): Buffer => Buffer.from(JSON.stringify(message));

/** stream.subscribed: the connection's filters as applied, the epoch and the head. */
export function subscribedMessage(sub: Subscription, epoch: string | null, head: number | null): Record<string, unknown> {
  return control('stream.subscribed', head ?? 0, {
    kinds: sub.kinds ? [...sub.kinds] : null,
    markets: sub.markets ? [...sub.markets] : null,
    marketsIgnored: sub.marketsIgnored,
    intervals: sub.intervals ? [...sub.intervals] : null,
    parties: [...sub.parties],
    since: sub.since,
    epoch,
    headSeq: head,
  });
}
