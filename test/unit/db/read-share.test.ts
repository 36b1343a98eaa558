// The database read pool's fair share (src/db/read-share.ts, ADR 0380): whose read takes the next
// free connection, what one address may hold, and that a wait is bounded, on virtual time.
import { describe, expect, it } from 'vitest';
import { currentReadFlow, GATEWAY_READS, readingAs, ReadShare } from '../../../src/db/read-share.js';
import { DatabaseUnavailableError, ReadsExhaustedError } from '../../../src/db/errors.js';
import { VirtualClock } from '../../support/virtual-clock.js';

const share = (clock: VirtualClock, over: Partial<ConstructorParameters<typeof ReadShare>[0]> = {}) =>
  new ReadShare({ capacity: 2, addressInFlight: 2, addressQueue: 100, waitMs: 10_000, clock, ...over });

describe('the read pool fair share', () => {
  it('a read is the flow of the request it runs in, through its awaits; outside any, the gateway\'s own', async () => {
    expect(currentReadFlow()).toBe(GATEWAY_READS);
    const flow = { address: '10.0.0.7', party: 'p' };
    const seen = await readingAs(flow, async () => {
      await new Promise((r) => setImmediate(r));
      await Promise.resolve();
      return currentReadFlow();
    });
    expect(seen).toBe(flow);
    expect(currentReadFlow()).toBe(GATEWAY_READS);
  });

  it('while the pool is full, the next free turn goes to the address that waited least recently served, not to the one that asked most', async () => {
    const clock = new VirtualClock();
    const reads = share(clock);
    const order: string[] = [];
    const take = (address: string, name: string) =>
      reads.turn({ address, party: null }).then((release) => {
        order.push(name);
        return release;
      });
    // The hog holds both connections and has eight more waiting; then the victim asks one.
    const running = [take('hog', 'h0'), take('hog', 'h1')];
    const waiting = Array.from({ length: 8 }, (_, i) => take('hog', `h${i + 2}`));
    const victim = take('victim', 'v');
    const held = await Promise.all(running);
    held[0]!();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['h0', 'h1', 'v']);
    (await victim)();
    held[1]!();
    for (const w of waiting) (await w)();
    expect(order.slice(3)).toEqual(['h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8', 'h9']);
  });

  it('an address runs DB_ADDRESS_IN_FLIGHT reads at once, and past DB_ADDRESS_QUEUE waiting the next is refused at once', async () => {
    const clock = new VirtualClock();
    const reads = share(clock, { capacity: 4, addressInFlight: 1, addressQueue: 2 });
    const first = await reads.turn({ address: 'a', party: null });
    let started = 0;
    const queued = [reads.turn({ address: 'a', party: null }), reads.turn({ address: 'a', party: null })].map((p) => p.then((r) => (started++, r)));
    await new Promise((r) => setImmediate(r));
    expect(started).toBe(0); // one in flight for the address, though the pool has room
    await expect(reads.turn({ address: 'a', party: null })).rejects.toBeInstanceOf(ReadsExhaustedError);
    // Another address is not refused, and starts at once.
    (await reads.turn({ address: 'b', party: null }))();
    // The gateway's own reads wait however many there are.
    const own = Array.from({ length: 10 }, () => reads.turn(GATEWAY_READS));
    for (const o of own) (await o)();
    first();
    for (const q of queued) (await q)();
    expect(started).toBe(2);
  });

  it('a read that waits past waitMs fails as the database unavailable for it, and leaves its place', async () => {
    const clock = new VirtualClock();
    const reads = share(clock, { capacity: 1, addressInFlight: 1, waitMs: 5_000 });
    const holder = await reads.turn({ address: 'a', party: null });
    const late = reads.turn({ address: 'b', party: null });
    const outcome = late.then(() => 'started', (e: unknown) => e);
    await clock.advance(4_999);
    expect(reads.waiting).toBe(1);
    await clock.advance(1);
    expect(await outcome).toBeInstanceOf(DatabaseUnavailableError);
    expect(reads.waiting).toBe(0);
    // Released twice: counted once (the next read starts, and so does one more after it).
    holder();
    holder();
    const next = await reads.turn({ address: 'c', party: null });
    let third = false;
    void reads.turn({ address: 'd', party: null }).then(() => (third = true));
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(false);
    next();
    await new Promise((r) => setImmediate(r));
    expect(third).toBe(true);
  });
});
