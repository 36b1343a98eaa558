// One bound on how long a caller waits for work it does not control (a database read, a shared
// engine call). The work itself is not cancelled: it goes on for whoever else awaits it.

/**
 * `work`'s outcome, or the error `onTimeout()` returns once `ms` have passed. The timer is cleared
 * as soon as either side settles, and a late rejection of `work` is handled by the race.
 */
export async function within<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
