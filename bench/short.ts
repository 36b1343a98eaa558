// The short mode of every benchmark (`BENCH_SHORT=1 npm run bench:<name>`; `npm run check:benches`
// runs them all so, as CI does): seconds, small data, one round, the whole path of the full run
// (every server, client and peer started, every ratio computed), and a non-zero exit on any error.
// Its timings are not judged and nothing is written to docs/performance.md.
export const SHORT = process.env.BENCH_SHORT === '1';

/** `full` in a real run, `short` under BENCH_SHORT=1. */
export function sized<T>(full: T, short: T): T {
  return SHORT ? short : full;
}
