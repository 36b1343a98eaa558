// The stream's current epoch (epoch.ts: the identity of the engine history being streamed), over
// the runtime's life: derived before the source starts (connections that arrive earlier wait for
// it), adopted from the first event when it was provisional (an empty history, or the
// process-local fallback), and derived again when the history is replaced.
import type { FastifyBaseLogger } from 'fastify';
import type { EngineEvent } from '../contracts/engine-event.js';
import { EMPTY_EPOCH, epochOf, LOCAL_EPOCH_PREFIX, resolveEpoch, type EpochSources } from './epoch.js';

export interface EpochTrackerOptions {
  /** Where seq 1 and the head are read; `store: false` after a replacement (the mirror may still hold the old history). */
  sources(options: { store: boolean }): EpochSources;
  logger: FastifyBaseLogger;
}

const provisional = (epoch: string): boolean => epoch === EMPTY_EPOCH || epoch.startsWith(LOCAL_EPOCH_PREFIX);

export class EpochTracker {
  private value: string | null = null;
  private waiters: Array<() => void> = [];
  /** The epoch is provisional: it is derived again once, when the first event arrives. */
  private pending = false;

  constructor(private readonly options: EpochTrackerOptions) {}

  /** The identity of the engine history being streamed; null until first derived. */
  get current(): string | null {
    return this.value;
  }

  /** Settles once `current` is known. */
  known(): Promise<void> {
    return this.value !== null ? Promise.resolve() : new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  set(epoch: string): void {
    this.value = epoch;
    this.pending = provisional(epoch);
    for (const w of this.waiters.splice(0)) w();
  }

  /** Derives the epoch from the history's first event (logged with where it came from); does not set it. */
  async derive(options: { store: boolean }): Promise<string> {
    const { logger } = this.options;
    const { epoch, source } = await resolveEpoch(this.options.sources(options));
    (source === 'local' ? logger.warn.bind(logger) : logger.info.bind(logger))(
      { epoch, source },
      source === 'local' ? 'stream epoch: seq 1 readable from neither the engine nor the database; this process uses its own epoch' : 'stream epoch derived',
    );
    return epoch;
  }

  /**
   * Each delivered event. While the epoch is provisional (empty history, or neither the engine nor
   * the database could give seq 1), the first event names it, or it is derived again; `changed`
   * is called when a better epoch is adopted (control connections are sent stream.subscribed with
   * it). This is not a history replacement.
   */
  observe(event: EngineEvent, changed: () => void): void {
    if (!this.pending) return;
    this.pending = false;
    const was = this.value;
    const adopt = (epoch: string): void => {
      // Replaced meanwhile, or nothing better known.
      if (this.value !== was || provisional(epoch)) return;
      this.set(epoch);
      changed();
    };
    if (event.seq === 1) return adopt(epochOf(event));
    void this.derive({ store: true }).then(adopt, () => {});
  }
}
