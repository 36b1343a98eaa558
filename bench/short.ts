// The short mode of every benchmark (`BENCH_SHORT=1 npm run bench:<name>`; `npm run check:benches`
// runs them all so, as CI does): seconds, small data, one round, the whole path of the full run
// (every server, client and peer started, every ratio computed), and a non-zero exit on any error.
// Its timings are not judged and nothing is written to docs/performance.md.
export const SHORT = process.env.BENCH_SHORT === '1';

/** `full` in a real run, `short` under BENCH_SHORT=1. */
export function sized<T>(full: T, short: T): T {
  return SHORT ? short : full;
}

/**
 * autocannon's sample interval (its `sampleInt`, ms): its default, 1 000, in a real run; 50 in a
 * short one. autocannon notices that a run is over (its `amount` answered, its `duration` past) only
 * on this tick, so with the default every short load, however small, lasted a whole second, and a
 * short bench:rest made about a hundred of them. Per-sample figures (`requests.average`) are per
 * this interval: `perSecond` turns them back into per-second ones (unchanged in a real run).
 */
export const SAMPLE_MS = sized(1000, 50);

export function perSecond(perSample: number): number {
  return SAMPLE_MS === 1000 ? perSample : (perSample * 1000) / SAMPLE_MS;
}

/**
 * A short run fails on any error: throws when one of `counts` (errors, non-2xx answers, timeouts)
 * is above 0 or is missing (a figure not measured). Does nothing in a real run, which reports them.
 */
export function shortCheck(what: string, counts: Record<string, number | null | undefined>): void {
  if (!SHORT) return;
  const bad = Object.entries(counts).filter(([, n]) => typeof n !== 'number' || !Number.isFinite(n) || n > 0);
  if (bad.length > 0) throw new Error(`short run: ${what}: ${bad.map(([k, n]) => `${k} ${String(n)}`).join(', ')}`);
}

/** A short run fails when a figure it should have computed is missing or not a finite number. */
export function shortFigure(what: string, value: unknown): void {
  if (SHORT && (typeof value !== 'number' || !Number.isFinite(value))) throw new Error(`short run: ${what} not computed (${String(value)})`);
}
