// Coalescing of identical public reads (the order book): concurrent requests for the same engine
// path share one engine call, and the engine sees at most one call in flight per path however
// many clients ask (at most one more batch waits here, in the gateway).
//
// Freshness is never traded for it: a request only joins a call that starts AFTER it arrived. While
// a call is in flight, newcomers gather into the next call, which starts when the current one
// settles. So every answer reflects the engine's state at some moment after the request was
// received (a client that placed an order and then reads the book sees its order), exactly as if
// the request had been forwarded alone; it only shares that answer's bytes with its neighbours.

/** Calls the engine for one path; settles with its answer or its failure. */
export type Fetch<T> = (path: string) => Promise<T>;

/** The requests waiting for the next call: they all get that call's promise. */
interface Batch<T> {
  promise: Promise<T>;
  resolve: (call: Promise<T>) => void;
  size: number;
}

interface PathState<T> {
  /** True while an engine call for this path is in flight. */
  inflight: boolean;
  /** Requests that arrived during the in-flight call: they share the next call. */
  next: Batch<T> | null;
}

export class SharedRead<T> {
  private readonly paths = new Map<string, PathState<T>>();

  /**
   * @param fetch the engine call
   * @param onShared told how many engine calls a shared call saved (its requests minus one)
   */
  constructor(
    private readonly fetch: Fetch<T>,
    private readonly onShared: (requests: number) => void = () => {},
  ) {}

  read(path: string): Promise<T> {
    let state = this.paths.get(path);
    if (!state) {
      state = { inflight: false, next: null };
      this.paths.set(path, state);
    }
    if (!state.inflight) return this.start(path, state);
    if (!state.next) state.next = batch<T>();
    state.next.size++;
    return state.next.promise;
  }

  /** Paths with a call in flight or waiting (0 when idle: no state is kept between bursts). */
  get activePaths(): number {
    return this.paths.size;
  }

  private start(path: string, state: PathState<T>): Promise<T> {
    state.inflight = true;
    const call = this.fetch(path);
    const settle = () => {
      const next = state.next;
      state.next = null;
      if (next) {
        next.resolve(this.start(path, state)); // a failure reaches every waiter of that call
        if (next.size > 1) {
          try {
            this.onShared(next.size - 1);
          } catch {
            /* a counter must not stall the path */
          }
        }
      } else {
        state.inflight = false;
        this.paths.delete(path);
      }
    };
    call.then(settle, settle);
    return call;
  }
}

function batch<T>(): Batch<T> {
  let resolve!: (call: Promise<T>) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve, size: 0 };
}
