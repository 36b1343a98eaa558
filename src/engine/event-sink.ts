// What an engine event source (the SSE bridge today; another transport may follow) hands the live
// runtime. The runtime implements it once (LiveRuntime.sink); a source calls it and nothing else.
import type { EngineEvent } from '../projections/types.js';

export interface EngineEventSink {
  /** Each event exactly once, in strictly increasing seq order. */
  event(event: EngineEvent): void;
  /** Wraps the delivery of a group of events (one received chunk): their frames leave for each client in one write. */
  batch(deliver: () => void): void;
  /** The source moved past an unfillable gap up to `seq`: replay clients asking across it get stream.gap. */
  skipped(seq: number): void;
  /**
   * The engine's history was replaced; the source resumes after `head` of the new one. The source
   * delivers nothing of the new history until this resolves (the runtime resets and tells clients).
   */
  replaced(head: number): Promise<void>;
}
