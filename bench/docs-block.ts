// Writes a bench's block into docs/performance.md between its markers (`<!-- name:start -->` …
// `<!-- name:end -->`), appending it when the markers are not there yet. Nothing is written in a
// short run (BENCH_SHORT=1, bench/short.ts: its figures mean nothing) or with BENCH_NO_DOCS=1.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SHORT } from './short.js';

const FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs/performance.md');

/** Writes `text` to docs/performance.md (`file`), unless this is a short run or BENCH_NO_DOCS=1. */
export function writeDocsFile(file: string | URL, text: string): void {
  if (process.env.BENCH_NO_DOCS === '1') return;
  if (SHORT) {
    console.log('short run (BENCH_SHORT=1): docs/performance.md left alone');
    return;
  }
  writeFileSync(file, text);
  console.log('results written to docs/performance.md');
}

export function writeDocsBlock(name: string, lines: string[]): void {
  const startMark = `<!-- ${name}:start -->`;
  const endMark = `<!-- ${name}:end -->`;
  const block = [startMark, ...lines, endMark].join('\n');
  let text = existsSync(FILE) ? readFileSync(FILE, 'utf8') : '';
  const start = text.indexOf(startMark);
  const end = text.indexOf(endMark);
  if (start >= 0 && end > start) text = text.slice(0, start) + block + text.slice(end + endMark.length);
  else text = `${text.replace(/\n*$/, '\n\n')}${block}\n`;
  writeDocsFile(FILE, text);
}
