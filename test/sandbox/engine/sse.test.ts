import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { RunningEngine } from '../../../sandbox/engine/server.js';
import { testEngine } from '../../support/stacks.js';
import { http } from './helpers.js';
import { eventually } from '../../support/eventually.js';

interface Reader {
  events: EventSourceMessage[];
  comments: string[];
  status: number;
  abort(): void;
  done: Promise<void>;
}

/** Open the admin stream with undici and parse it with eventsource-parser. */
async function openStream(e: RunningEngine, opts: { lastEventId?: string; query?: string; onEvent?: (m: EventSourceMessage, r: Reader) => void } = {}): Promise<Reader> {
  const ac = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${e.adminToken}` };
  if (opts.lastEventId !== undefined) headers['last-event-id'] = opts.lastEventId;
  const res = await request(`${e.url}/v1/admin/events/stream${opts.query ?? ''}`, { headers, signal: ac.signal });
  const reader: Reader = { events: [], comments: [], status: res.statusCode, abort: () => ac.abort(), done: Promise.resolve() };
  const parser = createParser({
    onEvent: (m) => {
      reader.events.push(m);
      opts.onEvent?.(m, reader);
    },
    onComment: (c) => reader.comments.push(c),
  });
  reader.done = (async () => {
    try {
      for await (const chunk of res.body) parser.feed(Buffer.from(chunk as Buffer).toString('utf8'));
    } catch {
      /* aborted */
    }
  })();
  return reader;
}

describe('admin SSE stream', () => {
  it('requires the bearer token', async (ctx) => {
    const eng = await testEngine(ctx);
    const r = await http(eng.url, 'GET', '/v1/admin/events/stream');
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'unauthorized' });
    const w = await http(eng.url, 'GET', '/v1/admin/events/stream', { headers: { authorization: 'Bearer nope' } });
    expect(w.body).toEqual({ error: 'unauthorized' });
  });

  it('frames events with id/event/data and sends heartbeats', async (ctx) => {
    const eng = await testEngine(ctx, { heartbeatMs: 30 });
    eng.engine.tick();
    const r = await openStream(eng, { query: '?since=0' });
    await eventually(() => r.events.length >= 1 && r.comments.includes('hb'));
    expect(r.events[0]).toMatchObject({ id: '1', event: 'engine.tick_start' });
    expect(JSON.parse(r.events[0]!.data)).toEqual({ seq: 1, kind: 'engine.tick_start', ts: expect.any(String), payload: { tick: 1 } });
    r.abort();
    await r.done;
  });

  it('resumes with Last-Event-ID across a forced disconnect with no seq lost or repeated', async (ctx) => {
    const eng = await testEngine(ctx);
    const e = eng;
    const total = 6000;
    let produced = 0;
    // Produce events continuously in small bursts while the client reads.
    const producer = (async () => {
      while (produced < total) {
        for (let i = 0; i < 50 && produced < total; i++, produced++) e.engine.tick();
        await new Promise((r) => setImmediate(r));
      }
    })();
    const first = await openStream(e, {
      query: '?since=0',
      onEvent: (_m, r) => {
        if (r.events.length === 1500) r.abort(); // forced disconnect mid-stream
      },
    });
    await first.done;
    const lastId = first.events.at(-1)!.id!;
    expect(Number(lastId)).toBeGreaterThanOrEqual(1500);
    const second = await openStream(e, { lastEventId: lastId });
    await producer;
    await eventually(() => second.events.length > 0 && Number(second.events.at(-1)!.id) === total);
    second.abort();
    await second.done;
    const seqs = [...first.events, ...second.events].map((m) => Number(m.id));
    expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    const datas = [...first.events, ...second.events].map((m) => JSON.parse(m.data).payload.tick);
    expect(datas).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  });

  it('answers 410 for a since older than retention, and replays from the oldest retained event', async (ctx) => {
    const eng = await testEngine(ctx, { retention: 50 });
    for (let i = 0; i < 200; i++) eng.engine.tick();
    const gone = await http(eng.url, 'GET', '/v1/admin/events/stream?since=10', { headers: { authorization: `Bearer ${eng.adminToken}` } });
    expect(gone.status).toBe(410);
    expect(gone.body).toEqual({ error: 'since before retention', oldestSeq: 151 });
    const gone2 = await http(eng.url, 'GET', '/v1/admin/events/stream', { headers: { authorization: `Bearer ${eng.adminToken}`, 'last-event-id': '149' } });
    expect(gone2.status).toBe(410);
    const r = await openStream(eng, { lastEventId: '150' });
    expect(r.status).toBe(200);
    await eventually(() => r.events.length === 50);
    expect(r.events[0]!.id).toBe('151');
    expect(r.events.at(-1)!.id).toBe('200');
    r.abort();
    await r.done;
    const bad = await http(eng.url, 'GET', '/v1/admin/events/stream?since=abc', { headers: { authorization: `Bearer ${eng.adminToken}` } });
    expect(bad.status).toBe(400);
  });

  it('stops writing to a reader that does not read and drops it once it falls behind retention', async (ctx) => {
    const eng = await testEngine(ctx, { retention: 2000 });
    const res = await request(`${eng.url}/v1/admin/events/stream`, { headers: { authorization: `Bearer ${eng.adminToken}` } });
    // never consume res.body
    const e = eng;
    expect(e.sse.connections).toBe(1);
    let rounds = 0;
    for (; rounds < 300 && e.sse.connections > 0; rounds++) {
      for (let i = 0; i < 1000; i++) e.engine.tick();
      // Pacing: 1 000 events, then 5 ms for the engine to write them (the loop ends once the reader is dropped).
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(e.sse.connections).toBe(0);
    expect(rounds).toBeGreaterThan(1); // it was served for a while before being dropped
    res.body.destroy();
  });
});

