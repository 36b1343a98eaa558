// What the HTTP edge asks of the live features (LiveView: an account, why an order ended, a client
// order id, the commitment status, a book view's admission), answered through the composition's
// LiveFeatureQueries (src/live-features.ts), so the runtime that extends this names no feature.
import type { CommitmentStatus } from '../contracts/commitment-status.js';
import type { AccountBook } from './account-book.js';
import type { BookViewSpec } from './book-views.js';
import type { ClientOrderState } from './client-orders.js';
import type { LiveFeatureQueries, LiveView } from './live-view.js';

export abstract class FeatureAnswers implements Pick<LiveView, 'accounts' | 'orderOutcome' | 'commitmentStatus' | 'clientOrder' | 'admitBookView'> {
  abstract get queries(): LiveFeatureQueries;
  /** The live path is configured (ENGINE_ADMIN_TOKEN). */
  abstract get enabled(): boolean;
  /** Enabled and started. */
  protected abstract get running(): boolean;

  /** The accounts (docs/account.md), when a feature keeps them. */
  get accounts(): AccountBook | undefined {
    return this.queries.accounts;
  }

  /** The bound on distinct `tick:` book groupings, when the books feature keeps them. */
  admitBookView(spec: BookViewSpec | null): void {
    this.queries.books?.ticks.admit(spec);
  }

  orderOutcome(orderId: string, waitMs: number): Promise<string | null> {
    if (!this.running) return Promise.resolve(null);
    return this.queries.orderOutcome(orderId, waitMs);
  }

  clientOrder(party: string, clientOrderId: string): ClientOrderState | null {
    return this.queries.clientOrder?.(party, clientOrderId) ?? null;
  }

  commitmentStatus(): CommitmentStatus | null {
    return this.enabled ? this.queries.commitmentStatus() : null;
  }
}
