// What the calls' handlers act with, built once by the trading routes (trading/routes.ts) from the
// app's engine, session keys, replay memory, budgets and stores: the verified-forward of each call's
// declared engine route (forward.ts routeCall), the desk's parts (batch.ts), the client order lookup
// and the dead man's switch. The pipeline (pipeline.ts) holds it; a gateway without trading routes has none
// and every trading call is answered 404.
import type { RouteCall } from '../trading/forward.js';
import type { DeskParts } from '../trading/batch.js';
import type { DeadMansSwitch } from '../trading/dead-mans-switch.js';
import type { TradingBudgets } from '../trading/rate-limit.js';
import type { ClientCall } from './declaration.js';

export interface CallParts {
  readonly budgets: TradingBudgets;
  /** The verified-forward of each call that declares an engine route, built once. */
  readonly forwards: ReadonlyMap<ClientCall, RouteCall>;
  readonly desk: DeskParts;
  readonly clientOrder: (party: string, clientOrderId: string) => Promise<unknown>;
  readonly deadMansSwitch: DeadMansSwitch;
}
