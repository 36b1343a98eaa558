// What an idle stream connection costs the gateway's heap (docs/performance.md "Capacity of one
// replica"). The clients live in another process, so that only the server's side is counted; the
// heap is measured after full collections (V8's gc, exposed at run time).
import { spawn, type ChildProcess } from 'node:child_process';
import type { IncomingMessage } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../support/gateway.js';
import { wsUrl } from './helpers.js';
import { eventually } from '../../support/eventually.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function collect(): number {
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** A process holding `n` open stream connections to `url`; resolves once they are all open. */
function clients(url: string, n: number): Promise<ChildProcess> {
  const code = `
    const WebSocket = require('ws');
    let open = 0;
    for (let i = 0; i < ${n}; i++) {
      const ws = new WebSocket(${JSON.stringify(url)}, { perMessageDeflate: false });
      ws.on('open', () => { if (++open === ${n}) process.send('open'); });
      ws.on('error', (e) => { process.send('error: ' + e.message); });
    }`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => (m === 'open' ? resolve(child) : reject(new Error(String(m)))));
  });
}

describe('an idle stream connection', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway({ WS_MAX_CONNECTIONS_PER_IP: '0', HTTP_MAX_CONNECTIONS_PER_IP: '0' }, { listen: true, overrides: { live: null } });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('keeps nothing of its upgrade request', async () => {
    // Weak references only: this listener holds none of the requests.
    const requests: Array<WeakRef<IncomingMessage>> = [];
    const watch = (req: IncomingMessage): void => void requests.push(new WeakRef(req));
    gw.app.server.on('upgrade', watch);
    const holder = await clients(wsUrl(gw.url, 'kinds=trade'), 20);
    try {
      gw.app.server.off('upgrade', watch);
      collect();
      expect(requests).toHaveLength(20);
      expect(requests.filter((r) => r.deref() !== undefined)).toHaveLength(0);
    } finally {
      holder.kill();
    }
  });

  // About 4 KB here (3 KB in a gateway process of its own: bench/capacity.ts); 7.8 KB before the
  // connection's listeners and message handlers were shared and its filter sets interned.
  it('costs the heap less than 5.5 KB', async () => {
    const N = 1_000;
    // A first round warms every path (and the shared filter sets) so that the measured one counts connections only.
    const warm = await clients(wsUrl(gw.url, 'kinds=trade'), 50);
    warm.kill();
    await eventually(async () => /^bff_ws_clients 0$/m.test(await (await fetch(`${gw.url}/metrics`)).text()), 'the warm-up connections closed');
    const before = collect();
    const holder = await clients(wsUrl(gw.url, 'kinds=trade'), N);
    try {
      const perConnection = (collect() - before) / N;
      expect(perConnection).toBeLessThan(5_632);
    } finally {
      holder.kill();
    }
  }, 60_000);
});
