// Error toasts from the query cache are throttled to one per 30 s (docs/client.md), so an outage
// shows one message instead of one per failing query.
export interface ToastThrottle {
  /** Calls `show` unless a toast was shown less than `intervalMs` ago; answers whether it showed. */
  (show: () => void): boolean;
  reset(): void;
}

export function createToastThrottle(intervalMs = 30_000, now: () => number = Date.now): ToastThrottle {
  let last = -Infinity;
  const throttle = ((show: () => void) => {
    const t = now();
    if (t - last < intervalMs) return false;
    last = t;
    show();
    return true;
  }) as ToastThrottle;
  throttle.reset = () => {
    last = -Infinity;
  };
  return throttle;
}
