// Clients of a replica that is behind the engine are never left subscribed to silence: while the
// replica's lag (LiveStatus.lag) says `behind`, every connection that takes control messages gets
// `stream.lagging` (lagging: true, with the engine's head and how far behind) every
// LAG_NOTICE_MS, and one `stream.lagging` with lagging: false once it has caught up. Their frames
// are not lost: the replica delivers them when it catches up, in order, after the notices already
// sent. A connection that takes no control messages (spec kinds only) is held the same way and
// gets the frames afterwards (docs/stream.md "Control messages").
import type { StreamLag } from './live-view.js';
import { control } from './control.js';
import { systemClock, type Clock, type ClockTimer } from '../contracts/clock.js';

export const LAG_NOTICE_MS = 2_000;

export class LagNotice {
  private timer: ClockTimer | null = null;
  private lagging = false;

  constructor(
    private readonly o: {
      lag: () => StreamLag | undefined;
      head: () => number | null;
      announce: (message: Record<string, unknown>) => void;
      /** Default systemClock. */
      clock?: Clock;
    },
  ) {}

  private get clock(): Clock {
    return this.o.clock ?? systemClock;
  }

  /** Checks every LAG_NOTICE_MS, re-armed after each check (ADR 0240: a periodic job is a timer that re-arms itself). */
  start(): void {
    if (this.timer) return;
    const check = (): void => {
      this.tick();
      if (this.timer) this.timer = this.clock.setTimeout(check, LAG_NOTICE_MS).unref();
    };
    this.timer = this.clock.setTimeout(check, LAG_NOTICE_MS).unref();
  }

  stop(): void {
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** One check: a notice while behind, and one when it ends. */
  tick(): void {
    const lag = this.o.lag();
    if (!lag) return;
    if (!lag.behind && !this.lagging) return;
    if (!lag.behind && (lag.events ?? 0) > 0) return; // no longer past the bound, still catching up: the end notice waits for the head
    this.lagging = lag.behind;
    const head = this.o.head();
    this.o.announce(
      control('stream.lagging', head ?? 0, {
        lagging: lag.behind,
        headSeq: head,
        engineHeadSeq: lag.engineHead,
        behindEvents: lag.events,
        behindSeconds: Math.round(lag.seconds * 10) / 10,
      }),
    );
  }
}
