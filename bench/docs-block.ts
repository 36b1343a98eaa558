// Writes a bench's block into docs/performance.md between its markers (`<!-- name:start -->` …
// `<!-- name:end -->`), appending it when the markers are not there yet. BENCH_NO_DOCS=1: nothing.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs/performance.md');

export function writeDocsBlock(name: string, lines: string[]): void {
  if (process.env.BENCH_NO_DOCS === '1') return;
  const startMark = `<!-- ${name}:start -->`;
  const endMark = `<!-- ${name}:end -->`;
  const block = [startMark, ...lines, endMark].join('\n');
  let text = existsSync(FILE) ? readFileSync(FILE, 'utf8') : '';
  const start = text.indexOf(startMark);
  const end = text.indexOf(endMark);
  if (start >= 0 && end > start) text = text.slice(0, start) + block + text.slice(end + endMark.length);
  else text = `${text.replace(/\n*$/, '\n\n')}${block}\n`;
  writeFileSync(FILE, text);
}
