// Retry policy (docs/client.md): network errors and 5xx are retried with exponential backoff and jitter;
// statuses below 500 never are (a 4xx will not change by asking again).
export interface RetryPolicy {
  /** Retries after the first attempt (default 3; 0 disables). */
  retries: number;
  /** First delay in ms (default 200), doubled per attempt. */
  baseDelayMs: number;
  /** Cap of one delay in ms (default 5 000). */
  maxDelayMs: number;
  /** Source of jitter in [0, 1); injectable for tests. */
  random: () => number;
  /** Waits; injectable for tests. */
  sleep: (ms: number) => Promise<void>;
}

export const defaultRetry: RetryPolicy = {
  retries: 3,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  random: Math.random,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/**
 * Delay before retry number `attempt` (0-based): "equal jitter", half fixed and half random, so
 * clients that failed together do not come back together but still wait a growing minimum.
 */
export function backoffDelay(policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs' | 'random'>, attempt: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(ceiling / 2 + policy.random() * (ceiling / 2));
}

export function isRetryableStatus(status: number): boolean {
  return status === 0 || status >= 500;
}
