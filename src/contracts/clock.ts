// The one source of time for the gateway. Every module that reads the time or waits takes a Clock
// (default `systemClock`), so tests drive timers on virtual time (test/support/virtual-clock.ts)
// instead of sleeping, and a timer's behaviour is decided by the code, not by the machine's load.
//
// Guarantees of every implementation:
// - `now()` is wall-clock ms since the Unix epoch (what Date.now() gives); never decreases within
//   one Clock (a virtual clock only advances; the system clock may step, as Date.now() does).
// - A timer set for `ms` runs once, no earlier than `now() + ms` as this clock reads it, after
//   the call that set it has returned (never synchronously), unless cleared first.
// - Timers due at the same instant run in the order they were set.
// - `clearTimeout` of a timer that ran or was cleared does nothing.

/** A pending timer; `unref` lets the process exit while it waits (no-op on a virtual clock). */
export interface ClockTimer {
  unref(): ClockTimer;
}

export interface Clock {
  /** Wall-clock ms since the Unix epoch. */
  now(): number;
  /** Runs `fn` once after `ms` (guarantees above). */
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
  /** Resolves after `ms`, or at once with `signal` aborted; an abort during the wait resolves it early. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }
  setTimeout(fn: () => void, ms: number): ClockTimer {
    return setTimeout(fn, ms);
  }
  clearTimeout(timer: ClockTimer): void {
    clearTimeout(timer as ReturnType<typeof setTimeout>);
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }
}

/** `sleep` for any Clock, from its timers (shared by the implementations). */
export function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** A repeating timer made of a Clock's one-shot timers; `cancel` stops it (also from inside `fn`). */
export interface Repeating {
  cancel(): void;
}

/**
 * Runs `fn` every `periodMs` on `clock` (each run armed when the previous one ran, so a late run
 * delays the next rather than bunching them); the timers are unref'd, as an interval that must not
 * keep the process alive.
 */
export function repeatOn(clock: Clock, periodMs: number, fn: () => void): Repeating {
  let timer: ClockTimer | null = null;
  const arm = (): void => {
    timer = clock
      .setTimeout(() => {
        arm();
        fn();
      }, periodMs)
      .unref();
  };
  arm();
  return {
    cancel: () => {
      if (timer) clock.clearTimeout(timer);
      timer = null;
    },
  };
}

/** Real time: Date.now() and the event loop's timers. */
export const systemClock: Clock = new SystemClock();
