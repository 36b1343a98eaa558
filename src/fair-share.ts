// A fair share of something every client uses and few can hold at once: the engine connection pool
// (engine/client.ts, docs/trading.md "A fair share of the engine"), the database read pool
// (db/read-share.ts) and the proof build lane (http/reads/proof-build-lane.ts). The work of every
// client address, and of every party within an address, is started in weighted fair order (deficit
// round robin at both levels) in front of the shared thing, instead of first come, first served.
// Pure: no I/O, no timers; its owner starts the work and says when each is done.
//
// Guarantees (test/unit/fair-share.test.ts, with fast-check):
// - At most `capacity` calls run at once (started, not yet `done`), all addresses together.
// - At most `addressInFlight` calls of one address run at once: whatever one address sends, the
//   others always find `capacity - addressInFlight × (busy addresses - 1)` … at least one slot
//   free whenever capacity > addressInFlight, and wait behind no more than that address's
//   `addressInFlight` calls at the engine.
// - At most `addressQueue` calls of one address wait (except the addresses of `unboundedQueue`);
//   past it `submit` refuses (returns null) at once: what one address holds is bounded by
//   addressInFlight + addressQueue.
// - Work-conserving: a call waits only while its address is at its bound or every slot is taken.
// - Between addresses continuously waiting, starts are shared in proportion to their weights
//   (deficit round robin: over any stretch, two addresses of weight 1 differ by at most one
//   call's cost plus one quantum); within an address, between its parties, the same.
// - Within one party, calls start in the order they were submitted (FIFO).
// - A waiting call can be cancelled (its deadline passed): it never starts, and frees its place
//   in the address's queue at once.
// - `start` callbacks run synchronously from `submit` or `done`, never reentrantly: a start that
//   calls `done` (a dispatch that failed at once) is handled after it returns.

export interface FairShareOptions {
  /** Calls running at once, all addresses (the engine pool's connections). */
  capacity: number;
  /** Calls of one client address running at once. */
  addressInFlight: number;
  /** Calls of one client address waiting for a slot; past it they are refused. */
  addressQueue: number;
  /** Weight of an address (default 1): its share of the starts among the waiting addresses. */
  weight?: (address: string) => number;
  /** Addresses whose waiting calls are not bounded (the gateway's own: a fired switch's cancels must all be sent). */
  unboundedQueue?: readonly string[];
}

/** Whose call it is: the client address (already grouped: IPv6 by /64) and the party, if known. */
export interface Flow {
  address: string;
  party: string | null;
}

/** A call submitted to the share: cancel it while it waits, say `done` once it ran. */
export interface FairTicket {
  /** Removes a call that has not started (true); false when it already started or ended. */
  cancel(): boolean;
  /** The call that started is over (its engine answer or failure): frees its slot. Once. */
  done(): void;
}

type State = 'waiting' | 'running' | 'over';

class Ticket implements FairTicket {
  state: State = 'waiting';
  constructor(
    readonly share: FairShare,
    readonly party: Party,
    readonly cost: number,
    readonly start: () => void,
  ) {}
  cancel(): boolean {
    if (this.state !== 'waiting') return false;
    this.state = 'over';
    this.party.waiting--;
    this.party.address.waiting--;
    this.share.waitingTotal--;
    this.share.cancelled(this.party.address);
    return true;
  }
  done(): void {
    if (this.state !== 'running') return;
    this.state = 'over';
    this.share.finished(this.party.address);
  }
}

/** A member of a deficit round robin ring. */
interface Member {
  deficit: number;
  weight: number;
  inRing: boolean;
  /** Cost of the next call it would start; null when it has none (cancelled calls are dropped). */
  headCost(): number | null;
}

/**
 * Deficit round robin over members with work: the member at the front serves while its deficit
 * covers its next call's cost; otherwise it is given `weight` more and goes to the back.
 */
class Ring<M extends Member> {
  private items: M[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  add(m: M): void {
    if (m.inRing) return;
    m.inRing = true;
    this.items.push(m);
  }

  /** The member to serve next (its deficit already charged), or null when none has work. */
  next(): M | null {
    for (;;) {
      if (this.head >= this.items.length) return null;
      const m = this.items[this.head]!;
      const cost = m.headCost();
      if (cost === null) {
        this.drop();
        continue;
      }
      if (m.deficit >= cost) {
        m.deficit -= cost;
        return m;
      }
      m.deficit += m.weight;
      this.rotate();
    }
  }

  /** The front member stops being served (no work, or at its bound); its deficit is forgotten. */
  drop(): void {
    const m = this.items[this.head]!;
    m.inRing = false;
    m.deficit = 0;
    this.head++;
    this.compact();
  }

  private rotate(): void {
    const m = this.items[this.head]!;
    this.head++;
    this.items.push(m);
    this.compact();
  }

  private compact(): void {
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

class Party implements Member {
  deficit = 0;
  readonly weight = 1;
  inRing = false;
  waiting = 0;
  private queue: Ticket[] = [];
  private head = 0;
  constructor(
    readonly key: string,
    readonly address: Address,
  ) {}
  push(t: Ticket): void {
    this.queue.push(t);
  }
  headCost(): number | null {
    while (this.head < this.queue.length && this.queue[this.head]!.state !== 'waiting') this.head++;
    if (this.head >= this.queue.length) {
      this.queue = [];
      this.head = 0;
      return null;
    }
    return this.queue[this.head]!.cost;
  }
  take(): Ticket {
    const t = this.queue[this.head++]!;
    if (this.head > 64 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return t;
  }
}

class Address implements Member {
  deficit = 0;
  inRing = false;
  waiting = 0;
  running = 0;
  readonly parties = new Map<string, Party>();
  readonly ring = new Ring<Party>();
  constructor(
    readonly key: string,
    readonly weight: number,
  ) {}
  headCost(): number | null {
    for (;;) {
      const p = this.ring.next();
      if (p === null) return null;
      // Peeked, not taken: give the party its charge back (taken for real in FairShare.pump).
      const cost = p.headCost()!;
      p.deficit += cost;
      return cost;
    }
  }
}

export class FairShare {
  private readonly addresses = new Map<string, Address>();
  private readonly ring = new Ring<Address>();
  private runningTotal = 0;
  /** Waiting calls, all addresses (for metrics). */
  waitingTotal = 0;
  private pumping = false;

  constructor(private readonly options: FairShareOptions) {
    if (!(options.capacity >= 1 && options.addressInFlight >= 1 && options.addressQueue >= 0)) throw new Error('FairShare: capacity and addressInFlight must be at least 1');
  }

  /** Calls running now (all addresses). */
  get running(): number {
    return this.runningTotal;
  }

  /** Calls of `address` running and waiting now. */
  held(address: string): { running: number; waiting: number } {
    const a = this.addresses.get(address);
    return { running: a?.running ?? 0, waiting: a?.waiting ?? 0 };
  }

  /**
   * Calls `address` could submit now without any being refused: its free in-flight places and
   * queue places (a batch asks before its items are checked, so a burst past it is refused whole,
   * before any of its work is done).
   */
  room(address: string): number {
    const a = this.addresses.get(address);
    return Math.max(0, this.options.addressInFlight - (a?.running ?? 0)) + Math.max(0, this.options.addressQueue - (a?.waiting ?? 0));
  }

  /**
   * Submits a call costing `cost` (default 1: one engine call); `start` runs when its turn comes
   * (maybe before this returns). Null: refused, the address already has `addressQueue` waiting.
   */
  submit(flow: Flow, start: () => void, cost = 1): FairTicket | null {
    let a = this.addresses.get(flow.address);
    if (!a) {
      a = new Address(flow.address, this.options.weight?.(flow.address) ?? 1);
      this.addresses.set(flow.address, a);
    }
    // It would wait when calls of its address wait before it (FIFO per party, fair between them)
    // or there is no room for it now; refused when its address already has addressQueue waiting.
    const startsNow = a.waiting === 0 && a.running < this.options.addressInFlight && this.runningTotal < this.options.capacity;
    if (!startsNow && a.waiting >= this.options.addressQueue && !this.options.unboundedQueue?.includes(flow.address)) {
      this.forget(a);
      return null;
    }
    const partyKey = flow.party ?? '';
    let p = a.parties.get(partyKey);
    if (!p) {
      p = new Party(partyKey, a);
      a.parties.set(partyKey, p);
    }
    const t = new Ticket(this, p, cost, start);
    p.push(t);
    p.waiting++;
    a.waiting++;
    this.waitingTotal++;
    a.ring.add(p);
    if (a.running < this.options.addressInFlight) this.ring.add(a);
    this.pump();
    return t;
  }

  /**
   * `submit` for work that awaits its turn: `started` resolves when the turn comes (at once when
   * `waiting` is false); the ticket's `done` ends it, its `cancel` gives a waiting place up (then
   * `started` never resolves). Null: refused, as `submit`.
   */
  acquire(flow: Flow, cost = 1): { ticket: FairTicket; started: Promise<void>; waiting: boolean } | null {
    let began = false;
    let start!: () => void;
    const started = new Promise<void>((resolve) => (start = resolve));
    const ticket = this.submit(
      flow,
      () => {
        began = true;
        start();
      },
      cost,
    );
    return ticket === null ? null : { ticket, started, waiting: !began };
  }

  /** Called by a ticket once its call is over. */
  finished(a: Address): void {
    this.runningTotal--;
    a.running--;
    if (a.waiting > 0) this.ring.add(a);
    else this.forget(a);
    this.pump();
  }

  /** Called by a ticket cancelled while waiting. */
  cancelled(a: Address): void {
    this.forget(a);
  }

  private forget(a: Address): void {
    // An idle address keeps nothing (a ring may still hold it until it next comes round: it is
    // dropped there, having no work, and a new call of the address starts a new record).
    if (a.running === 0 && a.waiting === 0 && this.addresses.get(a.key) === a) this.addresses.delete(a.key);
  }

  /** Starts calls while there is room, in deficit round robin order; never reentrant. */
  private pump(): void {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.runningTotal < this.options.capacity) {
        const a = this.ring.next();
        if (a === null) break;
        const p = a.ring.next()!;
        const t = p.take();
        p.waiting--;
        a.waiting--;
        this.waitingTotal--;
        if (p.headCost() === null && p.inRing) a.ring.drop();
        a.running++;
        this.runningTotal++;
        // Off the ring while at its bound or without work; back when one of its calls ends.
        if (a.running >= this.options.addressInFlight || a.waiting === 0) this.ring.drop();
        t.state = 'running';
        t.start();
      }
    } finally {
      this.pumping = false;
    }
  }
}
