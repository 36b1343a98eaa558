// Where a fault's silence is spent, for the fault tests of a NATS cluster: every party that moves
// the stream forward (each relay's stored seq, each client's frames) keeps the times it advanced,
// and the timeline prints, for one fault, when each party's longest silence after the fault
// began and ended, next to the election. Read together (relays resume long after the election:
// the publish path; clients long after the relays: the consumers) it says which stage spends the
// time, in every run, CI included.

/** The times something advanced (ms since the epoch), in order. */
export class Advances {
  readonly at: number[] = [];
  private last: unknown = undefined;

  /** Records now when `value` differs from the value seen last. */
  sample(value: unknown, now = Date.now()): void {
    if (value !== this.last) this.at.push(now);
    this.last = value;
  }
}

/** The longest stretch without an advance between `from` and `until` (ms since the epoch). */
export function longestGap(at: readonly number[], from: number, until = Date.now()): { start: number; end: number } {
  let gap = { start: from, end: from };
  let prev = from;
  for (const t of [...at.filter((x) => x >= from && x <= until), until]) {
    if (t - prev > gap.end - gap.start) gap = { start: prev, end: t };
    prev = t;
  }
  return gap;
}

/** One line: each party's longest silence after `from`, as seconds since `from` ("start–end"). */
export function timeline(label: string, from: number, electionMs: number, parties: ReadonlyArray<{ name: string; at: readonly number[] }>, until = Date.now()): string {
  const s = (t: number): string => ((t - from) / 1000).toFixed(1);
  const gaps = parties.map((p) => {
    const g = longestGap(p.at, from, until);
    return `${p.name} ${s(g.start)}–${s(g.end)}`;
  });
  return `timeline ${label}: fault at 0, election ${(electionMs / 1000).toFixed(1)} s; longest silences (s after the fault): ${gaps.join(', ')}`;
}
