// For bench/stream.ts: a worker that speaks the commitment check's protocol (src/commitments/
// check-protocol.ts) and only acknowledges what it is handed, so the live path's hand-off is
// measured without the real worker's hashing competing for the machine's cores.
import { parentPort } from 'node:worker_threads';
import type { FromWorker, ToWorker } from '../src/commitments/check-protocol.js';

const port = parentPort!;
let consumed = 0;
let timer: NodeJS.Timeout | null = null;
port.on('message', (m: ToWorker) => {
  if (m.t !== 'events') return;
  consumed += m.chars;
  timer ??= setTimeout(() => {
    timer = null;
    const answer: FromWorker = { checks: [], consumed };
    consumed = 0;
    port.postMessage(answer);
  }, 10);
});
