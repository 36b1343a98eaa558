// One line in the log when a dependency goes and one when it comes back (Redis, PostgreSQL, NATS),
// at warn, so the default level shows both; nothing in between, however many requests fail. The
// on-call engineer reads the outage's start and end from the replica's own log without a metric.
import { systemClock, type Clock } from './contracts/clock.js';

export interface WarnLogger {
  warn(obj: object, msg: string): void;
}

export class DependencyState {
  private downSince: number | null = null;
  /** When the last outage ended: a failure of a request sent before it is that outage's tail. */
  private upSince: number | null = null;

  constructor(
    private readonly name: string,
    private readonly logger: WarnLogger,
    /** The clock of `downSince` and of the `askedAt` the callers pass. */
    private readonly clock: Clock = systemClock,
  ) {}

  get down(): boolean {
    return this.downSince !== null;
  }

  /**
   * The dependency failed; logs `<name>: unreachable` on the first failure of an outage only.
   * `askedAt`: a request sent before the last outage ended (a query queued while it was down that
   * fails late) proves nothing about now, so it does not start a new outage.
   */
  failed(reason: string, askedAt?: number): void {
    if (this.downSince !== null) return;
    if (askedAt !== undefined && this.upSince !== null && askedAt < this.upSince) return;
    this.downSince = this.clock.now();
    this.logger.warn({ dependency: this.name, reason }, `${this.name}: unreachable`);
  }

  /**
   * The dependency answered; logs `<name>: reachable again` (with the outage's length) after an
   * outage. `askedAt` (this clock's time when the request was sent): an answer to a request sent before
   * the outage's first failure proves nothing about the outage (a query that was running when the
   * server began to shut down may still complete), so it does not end it.
   */
  answered(askedAt?: number): void {
    if (this.downSince === null) return;
    if (askedAt !== undefined && askedAt < this.downSince) return;
    const downMs = this.clock.now() - this.downSince;
    this.downSince = null;
    this.upSince = this.clock.now();
    this.logger.warn({ dependency: this.name, downMs }, `${this.name}: reachable again`);
  }
}
