// `npm run bench:stream`: bench/stream.ts, bench/stream-book.ts, then bench/stream-bandwidth.ts, each given this command's
// arguments (`npm run bench:stream -- --pipeline-only` reaches both: an `a && b` script would pass
// them to the last one only).
import { spawnSync } from 'node:child_process';

for (const file of ['./stream.ts', './stream-book.ts', './stream-bandwidth.ts']) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', new URL(file, import.meta.url).pathname, ...process.argv.slice(2)], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
