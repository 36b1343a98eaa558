// Every client call, listed once (docs/trading.md "One pipeline"). The socket's ops, the REST
// routes of the trading calls, their OpenAPI operations, the AsyncAPI messages, budgets and queues
// are all read from this list (in this order: the AsyncAPI document lists the ops so). Adding a call: its declaration (one file here, with its schema and
// handler), a line below, and its tests.
import type { ClientCall } from './declaration.js';
import { subscribe } from './subscribe.js';
import { unsubscribe } from './unsubscribe.js';
import { placeOrder } from './place.js';
import { cancelOrder } from './cancel.js';
import { orderBatch } from './order-batch.js';
import { orderReplace } from './order-replace.js';
import { orderStatus } from './order-status.js';
import { switchArm } from './switch-arm.js';
import { switchHeartbeat } from './switch-heartbeat.js';
import { switchDisarm } from './switch-disarm.js';
import { setTpsl } from './tpsl.js';

export const CLIENT_CALLS: readonly ClientCall[] = [
  subscribe,
  unsubscribe,
  placeOrder,
  cancelOrder,
  orderBatch,
  orderStatus,
  switchArm,
  switchHeartbeat,
  switchDisarm,
  orderReplace,
  setTpsl,
];
