// The user channels as one live feature (docs/stream.md "User channels"): the projection of a
// party's orders and fills (projections/user-orders.ts) makes the `order.update` and `fill` frames
// of each event; the channels' state on subscribe (user-snapshot.ts) and the cancel reasons the
// place-order answer waits for (order-outcomes.ts) are kept from those same frames.
import type { EngineEvent, FillPayload } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';
import type { FeatureSnapshot, LiveFeature } from '../contracts/live-feature.js';
import { UserOrders } from '../projections/user-orders.js';
import type { Clock } from '../contracts/clock.js';
import { OrderOutcomes } from './order-outcomes.js';
import { UserChannels, type UserSnapshotSources } from './user-snapshot.js';
import type { Subscription } from './subscription.js';

export class UserFeed implements LiveFeature<Subscription> {
  readonly name = 'user-channels';
  private readonly orders = new UserOrders();
  private readonly channels: UserChannels;
  private readonly outcomes: OrderOutcomes;

  /** `clock` times the place-order answer's wait for a cancel reason (default systemClock). */
  constructor(sources: Omit<UserSnapshotSources, 'orders'>, clock?: Clock) {
    this.channels = new UserChannels({ ...sources, orders: this.orders });
    this.outcomes = new OrderOutcomes(clock);
  }

  event(event: EngineEvent, fill?: FillPayload | null): Frame[] {
    const frames = this.orders.apply(event, fill);
    for (const f of frames) {
      this.channels.observe(f);
      this.outcomes.observe(f);
    }
    return frames;
  }

  snapshot(sub: Subscription): FeatureSnapshot | null {
    const later = this.channels.snapshot(sub);
    return later ? { frames: [], later } : null;
  }

  replaced(): void {
    this.orders.clear();
    this.channels.reset();
  }

  /** Why `orderId` ended, from its engine.order_cancelled event, waiting up to `waitMs` (order-outcomes.ts). */
  outcome(orderId: string, waitMs: number): Promise<string | null> {
    return this.outcomes.reason(orderId, waitMs);
  }
}
