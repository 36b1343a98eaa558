// The stream client against a small gateway speaking the stream protocol over real HTTP and
// WebSocket on loopback (test/support/fake-stream-gateway.ts): resume by the server's replay,
// REST backfill only after `stream.gap` (and only once the REST copy reached the stream), reset,
// refusals as values, clock correction, session renewal, half-open detection.
import type { FrameKind } from '../../../packages/client/src/engine-events.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { GatewayClient, GatewayError, localParty, StreamClient, type StreamMessage, type StreamOptions, type WebSocketCtor, type WebSocketLike } from '../../../packages/client/src/index.js';
import { startFakeStreamGateway, type FakeStreamGateway } from '../../support/fake-stream-gateway.js';
import { eventually } from '../../support/eventually.js';

describe('StreamClient', () => {
  let fake: FakeStreamGateway;
  let stream: StreamClient | null = null;
  let sockets: WebSocketLike[];
  let messages: StreamMessage[];
  let states: string[];
  const Recording = function (this: unknown, url: string) {
    const ws = new WebSocket(url) as unknown as WebSocketLike;
    sockets.push(ws);
    return ws;
  } as unknown as WebSocketCtor;
  const open = (client: GatewayClient, extra: Partial<StreamOptions> = {}) => {
    stream = new StreamClient({
      client,
      WebSocket: Recording,
      reconnect: { baseDelayMs: 20, maxDelayMs: 50 },
      onMessage: (m) => messages.push(m),
      onState: (s) => states.push(s),
      ...extra,
    });
    stream.start();
    return stream;
  };
  const seqFrames = () => messages.flatMap((m) => (m.source === 'live' && !m.frame.snapshot ? [m.frame.seq] : m.source === 'backfill' ? [m.event.seq] : []));
  const isLive = () => states.at(-1) === 'live';

  beforeEach(async () => {
    fake = await startFakeStreamGateway();
    sockets = [];
    messages = [];
    states = [];
  });
  afterEach(async () => {
    stream?.stop();
    stream = null;
    await fake.close();
  });

  it('resumes with since=<last seq - 1>&epoch=<epoch> and takes the replay: nothing lost, nothing twice', async () => {
    fake.publishTrades(3);
    const client = new GatewayClient({ baseUrl: fake.url });
    open(client);
    await eventually(() => fake.sockets.length === 1 && isLive(), { what: 'first connection', timeoutMs: 8_000 });
    fake.publishTrades(2);
    await eventually(() => seqFrames().length === 2, { what: 'two live frames', timeoutMs: 8_000 });
    // Down: five more happen meanwhile.
    fake.sockets[0]!.terminate();
    fake.publishTrades(5);
    await eventually(() => seqFrames().length === 7, { what: 'replayed frames', timeoutMs: 8_000 });
    const resume = fake.upgrades[1]!;
    expect(resume.searchParams.get('since')).toBe('4'); // last delivered 5, one below
    expect(resume.searchParams.get('epoch')).toBe('e1');
    expect(resume.searchParams.get('control')).toBe('true');
    expect(seqFrames()).toEqual([4, 5, 6, 7, 8, 9, 10]);
    expect(fake.eventQueries).toHaveLength(0); // no REST: the server's replay covered it
    // Snapshot frames came with each connection and are marked.
    expect(messages.filter((m) => m.source === 'live' && m.frame.snapshot)).toHaveLength(2);
  });

  it('gets the frames of a seq it saw only partly, and not the ones it had', async () => {
    const client = new GatewayClient({ baseUrl: fake.url });
    open(client);
    await eventually(() => isLive() && fake.sockets.length === 1, { what: 'connected', timeoutMs: 8_000 });
    // A flip: two position.update frames of one party at one seq, then a trade of the same seq.
    const pos = (id: string) => ({ kind: 'position.update', seq: 7, market: 'BTC-PERP', userParty: 'a::1', payload: { positionId: id } });
    fake.publish(pos('p1'));
    await eventually(() => seqFrames().length === 1, { what: 'first leg', timeoutMs: 8_000 });
    // The connection drops before the rest arrives.
    fake.silent = true;
    fake.publish(pos('p2'));
    fake.publish({ kind: 'trade', seq: 7, market: 'BTC-PERP', payload: {} });
    fake.silent = false;
    fake.sockets[0]!.terminate();
    await eventually(() => seqFrames().length === 3, { what: 'the rest of seq 7', timeoutMs: 8_000 });
    const got = messages.flatMap((m) => (m.source === 'live' && !m.frame.snapshot ? [`${m.frame.kind}:${(m.frame.payload as { positionId?: string }).positionId ?? ''}`] : []));
    expect(got).toEqual(['position.update:p1', 'position.update:p2', 'trade:']);
  });

  it('after stream.gap reads REST only up to the replay history, waits for the REST copy to reach it, and holds live frames meanwhile', async () => {
    fake.historySize = 5;
    const client = new GatewayClient({ baseUrl: fake.url });
    // Position frames of one party (the fake does not filter: every frame is of the party).
    const positions = (n: number) => {
      for (let i = 0; i < n; i++) fake.publish({ kind: 'position.update', seq: fake.head() + 1, market: 'BTC-PERP', userParty: 'a::1', payload: { positionId: 'p1' } });
    };
    open(client, { party: ['a::1'], kinds: ['position.update'], gapPollMs: 20 });
    await eventually(() => isLive() && fake.sockets.length === 1, { what: 'connected', timeoutMs: 8_000 });
    positions(2);
    await eventually(() => seqFrames().length === 2, { what: 'live', timeoutMs: 8_000 });
    fake.sockets[0]!.terminate();
    fake.mirrorLag = 12; // the REST copy trails: it does not yet hold what the replay lacks
    positions(20); // history keeps only the last 5 (seqs 18..22)
    await eventually(() => messages.some((m) => m.source === 'control' && m.message.kind === 'stream.gap'), { what: 'gap', timeoutMs: 8_000 });
    await eventually(() => states.at(-1) === 'backfilling', { what: 'backfilling', timeoutMs: 8_000 });
    // Deliberate: nothing delivered within 150 ms while the mirror trails.
    await new Promise((r) => setTimeout(r, 150));
    expect(messages.filter((m) => m.source === 'backfill')).toHaveLength(0); // waits, delivers nothing
    fake.mirrorLag = 0;
    positions(1); // a live frame during the backfill is held
    await eventually(() => seqFrames().length === 23, { what: 'everything', timeoutMs: 8_000 });
    expect(seqFrames()).toEqual(Array.from({ length: 23 }, (_, i) => i + 1));
    const sources = messages.filter((m) => m.source !== 'control' && !(m.source === 'live' && m.frame.snapshot)).map((m) => m.source);
    // 3..18 from REST (the oldest seq of the history included: REST stands for all its frames),
    // 19.. from the stream.
    expect(sources.slice(2, 18).every((s) => s === 'backfill')).toBe(true);
    expect(sources.slice(18).every((s) => s === 'live')).toBe(true);
    // The backfill used the server-side party filter (only position.update was asked).
    expect(fake.eventQueries.some((q) => q.searchParams.get('user') === 'a::1')).toBe(true);
  });

  it('on stream.reset tells the app, forgets the old resume point and goes on with the new history', async () => {
    const resets: unknown[] = [];
    fake.publishTrades(3);
    const client = new GatewayClient({ baseUrl: fake.url });
    open(client, { onReset: (r) => resets.push(r) });
    await eventually(() => isLive() && fake.sockets.length === 1, { what: 'connected', timeoutMs: 8_000 });
    fake.publishTrades(1);
    await eventually(() => seqFrames().length === 1, { what: 'live', timeoutMs: 8_000 });
    fake.sockets[0]!.terminate();
    fake.epoch = 'e2';
    await eventually(() => resets.length === 1, { what: 'reset', timeoutMs: 8_000 });
    expect(resets[0]).toEqual({ epoch: 'e2', previousEpoch: 'e1', reason: 'epoch_mismatch' });
    expect(stream!.epoch).toBe('e2');
    expect(stream!.lastSeq).toBe(4);
    fake.publishTrades(1);
    await eventually(() => seqFrames().at(-1) === 5, { what: 'live after reset', timeoutMs: 8_000 });
  });

  it('a refused upgrade reaches the app with the status and code, and stops the retry loop', async () => {
    fake.refuse = { status: 400, code: 'bad_request', error: 'unknown kind "trades"' };
    const refused: GatewayError[] = [];
    const client = new GatewayClient({ baseUrl: fake.url });
    open(client, { kinds: ['trades' as FrameKind /* a JavaScript caller: the types refuse it */], onRefused: (e) => refused.push(e) });
    await eventually(() => refused.length === 1, { what: 'refusal', timeoutMs: 8_000 });
    expect(refused[0]).toBeInstanceOf(GatewayError);
    expect(refused[0]!.status).toBe(400);
    expect(refused[0]!.code).toBe('bad_request');
    expect(states.at(-1)).toBe('refused');
    // Deliberate: no retry within 300 ms of a refusal.
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.upgrades).toHaveLength(1);
    expect(fake.probes).toHaveLength(1);
  });

  it('retries a 503 refusal with backoff until it passes', async () => {
    fake.refuse = { status: 503, code: 'too_many_connections' };
    const client = new GatewayClient({ baseUrl: fake.url });
    const errors: unknown[] = [];
    open(client, { onError: (e) => errors.push(e) });
    await eventually(() => fake.upgrades.length >= 3, { what: 'retries', timeoutMs: 8_000 });
    fake.refuse = null;
    await eventually(() => isLive() && fake.sockets.length === 1, { what: () => `connected at last (states ${states.slice(-5).join(',')}, sockets ${fake.sockets.length}, upgrades ${fake.upgrades.length})`, timeoutMs: 8_000 });
    expect(errors.some((e) => e instanceof GatewayError && e.code === 'too_many_connections')).toBe(true);
  });

  it('a socket that closed before opening while the gateway would accept it (426 to the probe) is retried, not refused', async () => {
    const client = new GatewayClient({ baseUrl: fake.url });
    // The first socket is dropped by the network before the upgrade completes.
    const Flaky = function (this: unknown, url: string) {
      const ws = new WebSocket(url);
      if (fake.upgrades.length === 0 && sockets.length === 0) ws.on('upgrade', () => ws.terminate());
      sockets.push(ws as unknown as WebSocketLike);
      return ws;
    } as unknown as WebSocketCtor;
    const refused: unknown[] = [];
    open(client, { WebSocket: Flaky, onRefused: (e) => refused.push(e) });
    await eventually(() => isLive() && sockets.length === 2, { what: () => `live on the second socket (states ${states.join(',')})`, timeoutMs: 8_000 });
    expect(refused).toEqual([]);
    expect(fake.probes).toHaveLength(1);
  });

  it('corrects its clock from the serverTime of a 401 and connects with a valid signature', async () => {
    fake.clockOffsetMs = 45_000; // the device clock is 45 s behind
    const client = new GatewayClient({ baseUrl: fake.url });
    const alice = await localParty('alice');
    // A session made by hand (the fake has no session route): the stream signs its query with it.
    const { Session, generateKeyPair } = await import('../../../packages/client/src/index.js');
    client.session = new Session(alice.party, 'sess-1', Date.now() + 3_600_000, (await generateKeyPair()).privateKey, () => client.now());
    open(client, { party: [alice.party] });
    await eventually(() => isLive() && fake.sockets.length === 1, { what: 'connected', timeoutMs: 8_000 });
    expect(Math.abs(client.clock.offsetMs - 45_000)).toBeLessThan(2_000);
    expect(fake.probes).toHaveLength(1);
  });

  it('renews an expired session through the hook and reconnects', async () => {
    const { Session, generateKeyPair } = await import('../../../packages/client/src/index.js');
    const key = (await generateKeyPair()).privateKey;
    let renewals = 0;
    const client: GatewayClient = new GatewayClient({
      baseUrl: fake.url,
      onSessionExpired: async (old): Promise<InstanceType<typeof Session>> => {
        renewals++;
        return new Session(old.party, 'sess-2', Date.now() + 3_600_000, key, () => client.now());
      },
    });
    client.session = new Session('alice::1', 'sess-1', Date.now() + 3_600_000, key, () => client.now());
    fake.expiredSessions.add('sess-1'); // the gateway knows better than the local clock
    open(client, { party: ['alice::1'] });
    await eventually(() => isLive() && fake.sockets.length === 1, { what: 'connected', timeoutMs: 8_000 });
    expect(renewals).toBe(1);
    expect(fake.upgrades.at(-1)!.searchParams.get('sessionId')).toBe('sess-2');
  });

  it('asks for heartbeats and replaces a socket that went silent (half-open)', async () => {
    const client = new GatewayClient({ baseUrl: fake.url });
    const errors: unknown[] = [];
    open(client, { heartbeatS: 1, onError: (e) => errors.push(e) });
    await eventually(() => isLive() && fake.sockets.length === 1, { what: 'connected', timeoutMs: 8_000 });
    expect(fake.upgrades[0]!.searchParams.get('heartbeat')).toBe('1');
    await eventually(() => messages.some((m) => m.source === 'control' && m.message.kind === 'stream.heartbeat'), { what: 'a heartbeat', timeoutMs: 8_000 });
    fake.silent = true; // the socket stays open but nothing arrives
    await eventually(() => fake.upgrades.length === 2, { what: 'reconnect after silence', timeoutMs: 10_000 });
    fake.silent = false;
    expect(String(errors.at(-1))).toMatch(/half-open/);
    await eventually(() => isLive(), { what: 'live again', timeoutMs: 8_000 });
  });
});
