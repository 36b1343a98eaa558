// The commitment check's worker thread (docs/verification.md, "The gateway's own check"): parses the
// events' texts, hashes them into the parties' pending trees (CommitmentWatcher) and sends every
// check back. It runs off the live path: the main thread only hands it the texts it already has.
import { parentPort } from 'node:worker_threads';
import { parseEngineEvent } from '../contracts/engine-event.js';
import type { FromWorker, ToWorker } from './check-protocol.js';
import { CommitmentWatcher, type CommitmentCheck } from './watcher.js';

const port = parentPort!;
if (!parentPort) throw new Error('check-worker.ts runs as a worker thread (see check-thread.ts)');

let checks: CommitmentCheck[] = [];
let consumed = 0;
let timer: NodeJS.Timeout | null = null;
const watcher = new CommitmentWatcher((check) => checks.push(check));
const ANSWER_CHARS = 1024 * 1024;
const ANSWER_MS = 10;

function answer(): void {
  if (timer) clearTimeout(timer);
  timer = null;
  const message: FromWorker = { checks, consumed };
  checks = [];
  consumed = 0;
  port.postMessage(message);
}

port.on('message', (m: ToWorker) => {
  if (m.t === 'events') {
    consumed += m.chars;
    for (const text of m.texts) {
      // The main thread parsed the same text already; what it accepted, this accepts.
      const event = parseEngineEvent(text);
      if (event) watcher.observe(event);
    }
  } else if (m.t === 'align') watcher.alignAfter(m.after);
  else watcher.reset();
  if (checks.length > 0 || consumed >= ANSWER_CHARS) answer();
  else if (consumed > 0 && !timer) timer = setTimeout(answer, ANSWER_MS);
});
