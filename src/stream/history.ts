// Bounded replay history for `/v1/stream?since=<seq>`: the last N frames sent, in send order,
// each with its serialised bytes. `coveredAfter` is the seq after which the history is complete:
// every frame with a greater seq is still here. It moves up as frames are evicted, and when the
// event source reports a gap it could not fill.
import type { Frame } from '../contracts/frame.js';

export interface Sent {
  frame: Frame;
  /** The JSON text: a view into `wire`, so the bytes are held once (framed-text.ts). */
  data: Buffer;
  /** The whole WebSocket frame. */
  wire: Buffer;
}

export class History {
  private readonly ring: Array<Sent | undefined>;
  private head = 0; // index of the oldest entry
  private count = 0;
  private covered: number | null = null;

  constructor(readonly capacity: number) {
    this.ring = new Array(capacity);
  }

  /** null: nothing is known yet (the event source has not said where it starts). */
  get coveredAfter(): number | null {
    return this.covered;
  }

  /** The history is complete after `seq` (the source's start point, or the end of an unfilled gap). */
  markCoveredAfter(seq: number): void {
    this.covered = this.covered === null ? seq : Math.max(this.covered, seq);
  }

  /**
   * The engine's history was replaced (it restarted below the bridge's resume point): the frames
   * held belong to the old history, so they are dropped, and the history is complete after `seq`
   * (the new head the bridge resumes from).
   */
  reset(seq: number): void {
    this.ring.fill(undefined);
    this.head = 0;
    this.count = 0;
    this.covered = seq;
  }

  push(entry: Sent): void {
    if (this.covered === null) this.covered = entry.frame.seq - 1;
    if (this.capacity === 0) {
      this.markCoveredAfter(entry.frame.seq);
      return;
    }
    if (this.count === this.capacity) {
      const evicted = this.ring[this.head]!;
      this.markCoveredAfter(evicted.frame.seq);
      this.ring[this.head] = entry;
      this.head = (this.head + 1) % this.capacity;
    } else {
      this.ring[(this.head + this.count) % this.capacity] = entry;
      this.count++;
    }
  }

  /** Frames with seq > since, oldest first. */
  *after(since: number): Generator<Sent> {
    for (let i = 0; i < this.count; i++) {
      const e = this.ring[(this.head + i) % this.capacity]!;
      if (e.frame.seq > since) yield e;
    }
  }

  get size(): number {
    return this.count;
  }
}
