// The dead man's switch, client side (docs/client.md "Dead man's switch"; the gateway's side in
// docs/trading.md). The gateway holds no key, so this client signs the cancels of the party's open
// orders, timestamped `aheadMs` into the future so they stay inside the engine's ±30 s window for a
// while, and hands them to the gateway over the stream's socket (`switch.arm`). While connected it
// re-signs and re-arms them every `refreshMs` (and at once after `place`), and sends a heartbeat
// every `heartbeatMs`. If this process dies or its connection drops for longer than `timeoutMs`,
// the gateway sends the cancels. Orders placed after the last refresh are not covered until the next.
import type { GatewayClient } from './client.js';
import { signCancel, type OpenOrderRef } from './desk.js';
import type { StreamClient } from './stream.js';
import type { Answer, OrderAccepted, OrderRequest } from './types.js';
import type { TriggerWouldFire } from './account.js';

export interface DeadMansSwitchOptions {
  client: GatewayClient;
  /** A StreamClient of this client whose filters hold the session's party (its `party` option). */
  stream: StreamClient;
  /** The gateway fires this long after the last arm or heartbeat (1 000..30 000 ms). */
  timeoutMs: number;
  /** The open orders to cover, read at every refresh (e.g. `() => userOrders.open()`). */
  orders: () => Iterable<OpenOrderRef>;
  /** Which switch of the party (default "default"). */
  name?: string;
  /** How often the cancels are re-signed and re-armed (default 10 000 ms; at most 20 000). */
  refreshMs?: number;
  /** How often a heartbeat is sent between refreshes (default timeoutMs / 3). */
  heartbeatMs?: number;
  /** How far ahead of now the cancels are timestamped (default 20 000 ms; 5 000..29 000). */
  aheadMs?: number;
  /** A refresh or heartbeat that failed (the next one tries again). */
  onError?: (err: unknown) => void;
}

/** What the gateway holds after an arm or heartbeat. */
export interface ArmedSwitch {
  name: string;
  cancels: number;
  timeoutMs: number;
  /** Unix ms (gateway clock) when it fires unless refreshed. */
  fireAt: number;
  /** Unix ms after which its cancels would no longer be valid (it fires 3 s before). */
  validUntil: number;
}

export interface DeadMansSwitchHandle {
  /** Re-signs the cancels of the open orders (plus `extraOrderIds`) and re-arms now. */
  refresh(extraOrderIds?: string[]): Promise<ArmedSwitch>;
  /** Places an order (over the socket) and, once it rests, covers it at once. */
  place<const M extends string>(order: OrderRequest<M>): Promise<Answer<OrderAccepted> | TriggerWouldFire>;
  /**
   * Stops refreshing, waits for the refreshes and heartbeats already on their way, then disarms at
   * the gateway: once it resolves the switch never fires (docs/trading.md "Dead man's switch").
   */
  disarm(): Promise<void>;
  /** Stops refreshing without disarming: the gateway fires after the timeout (what a crash does). */
  stop(): void;
  /** The last arm's answer (null before the first). */
  readonly armed: ArmedSwitch | null;
}

/** Arms a dead man's switch and keeps it armed; resolves once the first arm is answered. */
export async function deadMansSwitch(options: DeadMansSwitchOptions): Promise<DeadMansSwitchHandle> {
  const { client, stream, timeoutMs } = options;
  const name = options.name ?? 'default';
  const refreshMs = Math.min(options.refreshMs ?? 10_000, 20_000);
  const heartbeatMs = options.heartbeatMs ?? Math.max(250, Math.floor(timeoutMs / 3));
  const aheadMs = Math.min(Math.max(options.aheadMs ?? 20_000, 5_000), 29_000);
  const session = client.session;
  if (!session) throw new Error('deadMansSwitch needs a session: call createSession first');
  const fail = (err: unknown): void => options.onError?.(err);
  let armed: ArmedSwitch | null = null;
  let stopped = false;
  // Refreshes and heartbeats still on their way (signing, or awaiting the gateway's answer): a
  // disarm waits for them, so none can reach the gateway after it (and arm the switch again).
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(call: Promise<T>): Promise<T> => {
    inFlight.add(call);
    void call.then(
      () => inFlight.delete(call),
      () => inFlight.delete(call),
    );
    return call;
  };

  const refresh = (extra: string[] = []): Promise<ArmedSwitch> => track(arm(extra));
  const arm = async (extra: string[]): Promise<ArmedSwitch> => {
    const ids = new Set<string>(extra);
    for (const o of options.orders()) {
      if (o.orderId !== null && (o.status === undefined || o.status === 'open' || o.status === 'partially_filled')) ids.add(o.orderId);
    }
    const ts = client.now() + aheadMs;
    const cancels = [];
    for (const orderId of ids) {
      const signed = await signCancel(session, orderId, ts);
      cancels.push({ orderId, sig: signed.sig });
    }
    armed = (await stream.ask('switch.arm', { party: session.party, sessionId: session.sessionId, name, timeoutMs, cancels })) as ArmedSwitch;
    return armed;
  };

  await refresh();
  const refreshTimer = setInterval(() => void refresh().catch(fail), refreshMs);
  const heartbeatTimer = setInterval(() => void track(stream.ask('switch.heartbeat', { party: session.party, name })).then((a) => (armed = a as ArmedSwitch), fail), heartbeatMs);
  const stop = (): void => {
    stopped = true;
    clearInterval(refreshTimer);
    clearInterval(heartbeatTimer);
  };
  return {
    refresh,
    async place(order) {
      const answer = await client.placeOrder(order, { sender: stream.sender });
      if (!stopped && 'orderId' in answer && answer.ok && (answer.status === 'open' || answer.status === 'partially_filled')) await refresh([answer.orderId]);
      return answer;
    },
    async disarm() {
      stop();
      // A refresh in flight would otherwise re-arm the switch after this disarm.
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await stream.ask('switch.disarm', { party: session.party, name });
      armed = null;
    },
    stop,
    get armed() {
      return armed;
    },
  };
}
