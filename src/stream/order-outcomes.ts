// Why an order ended at once (docs/trading.md "Place-order answer"): the engine's place-order
// answer says `status: cancelled` but not why; its `engine.order_cancelled` event does (ioc: no
// more liquidity for an IOC or market order, margin, reduce_only). The live runtime records the
// reason of every cancel here (from the order.update frames), and the place-order route waits a
// moment for it — the event is emitted before the answer is sent, so it is normally already here or
// a few milliseconds behind on the stream.
import { systemClock, type Clock } from '../contracts/clock.js';
import type { Frame } from '../contracts/frame.js';

/** Reasons kept: the most recent cancels are what a place-order answer asks about. */
const KEPT = 10_000;

export class OrderOutcomes {
  private readonly reasons = new Map<string, string>();
  private readonly waiting = new Map<string, Array<(reason: string) => void>>();

  constructor(private readonly clock: Clock = systemClock) {}

  observe(frame: Frame): void {
    if (frame.kind !== 'order.update' || frame.payload.status !== 'cancelled') return;
    const id = frame.payload.orderId;
    const reason = frame.payload.reason;
    if (typeof id !== 'string' || typeof reason !== 'string') return;
    this.reasons.set(id, reason);
    if (this.reasons.size > KEPT) this.reasons.delete(this.reasons.keys().next().value as string);
    for (const resolve of this.waiting.get(id) ?? []) resolve(reason);
    this.waiting.delete(id);
  }

  /** The cancel reason of `orderId`, waiting up to `ms` for its event; null when none came. */
  reason(orderId: string, ms: number): Promise<string | null> {
    const known = this.reasons.get(orderId);
    if (known !== undefined) return Promise.resolve(known);
    return new Promise((resolve) => {
      const list = this.waiting.get(orderId) ?? [];
      this.waiting.set(orderId, list);
      const timer = this.clock.setTimeout(() => {
        const left = this.waiting.get(orderId)?.filter((r) => r !== done);
        if (left && left.length > 0) this.waiting.set(orderId, left);
        else this.waiting.delete(orderId);
        resolve(null);
      }, ms);
      timer.unref();
      const done = (reason: string): void => {
        this.clock.clearTimeout(timer);
        resolve(reason);
      };
      list.push(done);
    });
  }
}
