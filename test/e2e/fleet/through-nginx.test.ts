// The fleet on loopback, through a real nginx (deploy/nginx/gateway.conf.template): two gateway
// replica processes sharing Redis and consuming one JetStream stream, filled by a relay from a
// scripted engine. Everything a client does goes through nginx.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Redis } from 'ioredis';
import { generateKeyPair, makeParty, signHex } from '../../sandbox/engine/helpers.js';
import { closedPort, fleetServices, forgetFleetState, NATS_URL, REDIS_URL, uniqueName, waitFor, startReplica, startTestRelay, stopReplicas, type Replica } from '../../support/fleet.js';
import { startScriptedEngine, type ScriptedEngine } from '../../support/scripted-sse.js';
import { REPLICA_KEEP_ALIVE_MS, startNginx, type RunningNginx } from '../../../deploy/nginx.js';
import type { EngineRelay } from '../../../src/relay/relay.js';
import { ticks, ts } from '../../integration/stream/helpers.js';

const available = await fleetServices({ redis: true, nats: true, nginx: true });

interface Client {
  ws: WebSocket;
  upstream: string;
  seqs: number[];
  closed: Promise<number>;
}

describe.skipIf(!available)('a fleet behind nginx', () => {
  let engine: ScriptedEngine;
  let relay: EngineRelay;
  let nginx: RunningNginx;
  const replicas: Replica[] = [];
  const name = uniqueName('nginx');
  const stream = name.toUpperCase();
  const prefix = `${name}:`;
  let faucetCalls = 0;
  let next = 1;

  const env = (port: number) => ({
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DATABASE_URL: '',
    ENGINE_BASE_URL: engine.url,
    ENGINE_ADMIN_TOKEN: engine.token,
    WS_ORDERBOOK_POLL_MS: '60000',
    FAUCET_ENABLED: 'true',
    RATE_LIMIT_IP_MAX: '6',
    TRUST_PROXY: '127.0.0.1',
    REDIS_URL,
    REDIS_PREFIX: prefix,
    NATS_URL,
    NATS_STREAM: stream,
    NATS_SUBJECT: `${name}.events`,
    HTTP_KEEP_ALIVE_TIMEOUT_MS: String(REPLICA_KEEP_ALIVE_MS),
  });

  function push(n: number): void {
    engine.push(...ticks(next, next + n - 1));
    next += n;
  }

  async function client(query: string): Promise<Client> {
    const ws = new WebSocket(`${nginx.url.replace('http', 'ws')}/v1/stream?${query}`);
    const seqs: number[] = [];
    let upstream = '';
    ws.on('upgrade', (res) => (upstream = String(res.headers['x-upstream'] ?? '')));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString());
      if (m.kind === 'engine.tick_start') seqs.push(m.seq);
    });
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return { ws, upstream, seqs, closed };
  }

  async function call(method: string, path: string, headers: Record<string, string> = {}) {
    const res = await fetch(nginx.url + path, { method, headers });
    return { status: res.status, upstream: res.headers.get('x-upstream'), json: (await res.json()) as any };
  }

  beforeAll(async () => {
    engine = await startScriptedEngine();
    engine.handler = (req: IncomingMessage, res: ServerResponse) => {
      if (req.url !== '/v1/admin/faucet') return false;
      faucetCalls++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"newBalance":"1000.0000000000"}');
      return true;
    };
    relay = await startTestRelay({ stream, subject: `${name}.events`, engine });
    push(5); // the stream exists and holds something before the replicas start
    await waitFor(() => relay.streamLastSeq === 5, 10_000, 'relay');
    const ports = [await closedPort(), await closedPort()];
    replicas.push(...(await Promise.all(ports.map((p) => startReplica(p, env(p))))));
    nginx = await startNginx({ listen: `127.0.0.1:${await closedPort()}`, upstreams: ports.map((p) => `127.0.0.1:${p}`), replicaKeepAliveMs: REPLICA_KEEP_ALIVE_MS });
  }, 90_000);

  afterAll(async () => {
    await nginx?.stop();
    await stopReplicas(replicas);
    await relay?.stop();
    await engine?.close();
    await forgetFleetState(stream, prefix);
  });

  it('stream clients spread over the replicas receive identical frames', async () => {
    // One at a time, so nginx's round robin spreads them (concurrent upgrades may all land on one).
    const clients: Client[] = [];
    for (let i = 0; i < 4; i++) clients.push(await client('kinds=engine.tick_start'));
    expect(new Set(clients.map((c) => c.upstream)), clients.map((c) => c.upstream).join(' ')).toHaveProperty('size', 2);
    const from = next;
    push(30);
    const want = Array.from({ length: 30 }, (_, i) => from + i);
    // 30 s: a fresh-clone CI run at load 15 timed out at 10 s. Whatever arrived is then compared, so
    // a lost or repeated frame fails with the seqs each client has, not a bare timeout.
    await waitFor(() => clients.every((c) => c.seqs.length >= 30), 30_000, 'frames').catch(() => undefined);
    for (const c of clients) expect({ upstream: c.upstream, seqs: c.seqs }).toEqual({ upstream: c.upstream, seqs: want });
    for (const c of clients) c.ws.close();
  }, 60_000);

  it('a signature accepted by one replica is refused by the other; simultaneous faucet requests give one grant', async () => {
    const party = makeParty('fleet');
    const key = generateKeyPair();
    const sessionId = `sess-${name}`;
    const seq = next++;
    engine.push({ seq, kind: 'session.authorized', ts: ts(seq), party: party.id, payload: { sessionId, sessionPublicKey: key.publicKeyHex, expiresAt: Date.now() + 3_600_000 } });
    let t = Date.now();
    const sign = (method: string, path: string) => {
      t = Math.max(t + 1, Date.now());
      return { 'x-user': party.id, 'x-session-id': sessionId, 'x-session-sig': `${t}.${signHex(key.privateKey, `${method}\n${path}\n${t}\n`)}` };
    };
    const path = `/v1/users/${party.id}/faucet`;
    // Both replicas learn the session from the stream.
    await waitFor(async () => (await call('POST', path, sign('POST', path))).status === 200, 10_000, 'session known');
    faucetCalls = 0;
    await waitFor(async () => (await call('POST', path, sign('POST', path))).status === 429, 10_000, 'the other replica knows the session');

    const headers = sign('GET', `/v1/users/${party.id}/orders`);
    const first = await call('GET', `/v1/users/${party.id}/orders`, headers);
    const second = await call('GET', `/v1/users/${party.id}/orders`, headers);
    expect(first.upstream).not.toBe(second.upstream); // round robin: two replicas
    expect(first.status).not.toBe(401);
    expect(second).toMatchObject({ status: 401, json: { error: 'signature already used (replay)', code: 'unauthorized' } });

    const other = makeParty('fleet2');
    const sid2 = `sess2-${name}`;
    const seq2 = next++;
    engine.push({ seq: seq2, kind: 'session.authorized', ts: ts(seq2), party: other.id, payload: { sessionId: sid2, sessionPublicKey: key.publicKeyHex, expiresAt: Date.now() + 3_600_000 } });
    const path2 = `/v1/users/${other.id}/faucet`;
    const sign2 = () => {
      t = Math.max(t + 1, Date.now());
      return { 'x-user': other.id, 'x-session-id': sid2, 'x-session-sig': `${t}.${signHex(key.privateKey, `POST\n${path2}\n${t}\n`)}` };
    };
    // Each replica learns the second session from the stream: asked directly, neither says 401 any more.
    const ordersPath = `/v1/users/${other.id}/orders`;
    for (const r of replicas) {
      await waitFor(async () => {
        t = Math.max(t + 1, Date.now());
        const h = { 'x-user': other.id, 'x-session-id': sid2, 'x-session-sig': `${t}.${signHex(key.privateKey, `GET\n${ordersPath}\n${t}\n`)}` };
        return (await fetch(`http://127.0.0.1:${r.port}${ordersPath}`, { headers: h })).status !== 401;
      }, 10_000, 'session known by the replica');
    }
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map(() => call('POST', path2, sign2())));
    expect(new Set(answers.map((a) => a.upstream)).size).toBe(2);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(5);
    expect(faucetCalls).toBe(1);
  });

  it('a rate limit holds across replicas', async () => {
    // Fresh window: the key of 127.0.0.1 (TRUST_PROXY names nginx, the client is this process).
    const r = new Redis(REDIS_URL);
    const keys = await r.keys(`${prefix}rl:*`);
    if (keys.length) await r.del(...keys);
    r.disconnect();
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await call('GET', '/v1/orderbook?market=BTC-PERP'));
    expect(new Set(answers.map((a) => a.upstream)).size).toBe(2);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
  });

  it("a killed replica's clients reconnect through nginx with since= and lose nothing", async () => {
    const clients: Client[] = [];
    for (let i = 0; i < 4; i++) clients.push(await client('kinds=engine.tick_start&control=true'));
    const victim = replicas[0]!;
    const onVictim = clients.filter((c) => c.upstream.endsWith(`:${victim.port}`));
    expect(onVictim.length).toBeGreaterThan(0);
    const from = next;
    push(10);
    await waitFor(() => clients.every((c) => c.seqs.length >= 10), 10_000, 'frames before the kill');
    victim.proc.kill('SIGKILL');
    await victim.exited;
    push(20); // while the victim's clients are away
    const final = new Map<Client, () => number[]>();
    for (const c of clients) {
      if (!onVictim.includes(c)) {
        final.set(c, () => c.seqs);
        continue;
      }
      expect(await c.closed).toBe(1006); // killed: no close frame
      const before = [...c.seqs];
      const again = await client(`kinds=engine.tick_start&since=${before.at(-1)}`);
      expect(again.upstream.endsWith(`:${victim.port}`)).toBe(false);
      final.set(c, () => [...before, ...again.seqs]);
      c.ws = again.ws;
    }
    push(10);
    const want = Array.from({ length: 40 }, (_, i) => from + i);
    await waitFor(() => clients.every((c) => final.get(c)!().length >= 40), 10_000, 'frames after the kill');
    for (const c of clients) {
      expect(final.get(c)!()).toEqual(want);
      c.ws.close();
    }
  });
});
