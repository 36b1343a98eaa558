// KeyedSlots (src/http/trading/switch-firing.ts): the bound on one client address's switch-arm
// signature checks (ADR 0351). At most `max` tasks of a key run at once, the rest start in arrival
// order as slots free (a failing task frees its slot too), and other keys are never held up.
import { describe, expect, it } from 'vitest';
import { KeyedSlots } from '../../../src/http/trading/switch-firing.js';

/** A task that runs until the test releases it, noting its start. */
function held(log: string[], name: string, fail = false) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const task = async () => {
    log.push(name);
    await gate;
    if (fail) throw new Error(name);
    return name;
  };
  return { task, release };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('KeyedSlots', () => {
  it('runs at most max of a key at once, the others in arrival order; another key is not held', async () => {
    const slots = new KeyedSlots(2);
    const log: string[] = [];
    const tasks = ['a1', 'a2', 'a3', 'a4'].map((n, i) => held(log, n, i === 0));
    const runs = tasks.map((t) => slots.run('a', t.task));
    const other = held(log, 'b1');
    const otherRun = slots.run('b', other.task);
    await turn();
    expect(log).toEqual(['a1', 'a2', 'b1']);
    tasks[0]!.release(); // a1 fails: its slot passes on all the same
    await expect(runs[0]).rejects.toThrow('a1');
    await turn();
    expect(log).toEqual(['a1', 'a2', 'b1', 'a3']);
    tasks[2]!.release();
    expect(await runs[2]).toBe('a3');
    await turn();
    expect(log).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
    for (const t of [tasks[1]!, tasks[3]!, other]) t.release();
    expect(await Promise.all([runs[1], runs[3], otherRun])).toEqual(['a2', 'a4', 'b1']);
  });
});
