// The one way a test waits for something to happen: poll a condition until it holds, never sleep a
// fixed time. A fixed sleep is either too short on a loaded machine (a flaky test) or longer than
// needed everywhere else (a slow one); a condition returns as soon as it holds.
//
// `check` returns a truthy value when the condition holds (that value is returned) and anything
// falsy while not yet; a throw is a failure at once (a wrong state, not a late one). Past
// `timeoutMs` the wait fails, saying what it waited for.

export interface EventuallyOptions {
  /** Longest wait (ms, real time): default 10 s. */
  timeoutMs?: number;
  /** Named in the failure: what the test waited for (a function: evaluated at the failure, to show the state then). */
  what?: string | (() => string);
  /** Pause between two checks (ms): default 10. */
  everyMs?: number;
}

type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

export async function eventually<T>(check: () => T | Promise<T>, options: EventuallyOptions | string = {}): Promise<Truthy<T>> {
  const o = typeof options === 'string' ? { what: options } : options;
  const timeoutMs = o.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as Truthy<T>;
    if (Date.now() > deadline) {
      const what = typeof o.what === 'function' ? o.what() : (o.what ?? 'condition');
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, o.everyMs ?? 10));
  }
}
