// How fired dead man's switches share the engine (docs/trading.md "Dead man's switch"): at most
// `maxInFlight` cancels of all switches at once, handed out in turns, one cancel per switch per
// turn. A switch of one cancel fired while fifty of 200 fire is sent within one turn, not after
// their 10 000 cancels; a switch alone gets every slot. Without it each replica sent every due
// switch's cancels at once and looked for due switches again only once all were answered, so one
// trader's many large switches delayed another's by seconds (and flooded the engine pool).

interface Firing<T, R> {
  items: T[];
  next: number;
  results: R[];
  left: number;
  send: (item: T) => Promise<R>;
  done: (results: R[]) => void;
}

export class FairFiring {
  /** Switches with cancels still to send, in turn order. */
  private readonly ring: Firing<any, any>[] = [];
  private inFlight = 0;

  constructor(readonly maxInFlight: number) {}

  /** Sends every item through `send` in this scheduler's turns; its results, in the items' order. `send` must not throw. */
  fire<T, R>(items: readonly T[], send: (item: T) => Promise<R>): Promise<R[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((done) => {
      this.ring.push({ items: [...items], next: 0, results: new Array<R>(items.length), left: items.length, send, done });
      this.pump();
    });
  }

  /** Cancels being sent now, and switches waiting for a turn (for tests and metrics). */
  get load(): { inFlight: number; waiting: number } {
    return { inFlight: this.inFlight, waiting: this.ring.length };
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.ring.length > 0) {
      const f = this.ring.shift()!;
      const at = f.next++;
      // Back of the line while it has more: every other firing switch gets a slot first.
      if (f.next < f.items.length) this.ring.push(f);
      this.inFlight++;
      void f.send(f.items[at]).then((result) => {
        this.inFlight--;
        f.results[at] = result;
        if (--f.left === 0) f.done(f.results);
        this.pump();
      });
    }
  }
}

/**
 * Calls of one key applied one after the other, in the order they were made (a connection's
 * `switch.arm` then `switch.disarm` are applied in that order, never the other way round, however
 * long the arm's checks take). Other keys are not held up.
 */
export class KeyedOrder {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key);
    const result = before ? before.then(task, task) : task();
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with calls waiting or running. */
  get size(): number {
    return this.tails.size;
  }
}

/** At most `max` tasks of one key running at once; the others wait in arrival order. */
export class KeyedSlots {
  private readonly held = new Map<string, { active: number; waiting: (() => void)[]; head: number }>();

  constructor(private readonly max: number) {}

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let s = this.held.get(key);
    if (!s) this.held.set(key, (s = { active: 0, waiting: [], head: 0 }));
    const slot = s;
    if (slot.active >= this.max) await new Promise<void>((resolve) => slot.waiting.push(resolve));
    else slot.active++;
    try {
      return await task();
    } finally {
      if (slot.head < slot.waiting.length) {
        // The slot passes to the next waiter (active unchanged); the queue is cut once drained.
        const next = slot.waiting[slot.head++]!;
        if (slot.head === slot.waiting.length) {
          slot.waiting.length = 0;
          slot.head = 0;
        }
        next();
      } else if (--slot.active === 0) this.held.delete(key);
    }
  }
}
