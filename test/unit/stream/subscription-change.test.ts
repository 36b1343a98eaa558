// What subscribe / unsubscribe messages do to a connection's filters (docs/stream.md "Talking to
// the socket"), how a message is read, and the hub's swap: the ack, then only the snapshot of
// what was added, then live frames under the new filters, with none lost or doubled.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { Registry } from 'prom-client';
import { parseSubscription, matches, marketsFilterMatchesNothing, type Subscription } from '../../../src/stream/subscription.js';
import { applySubscribe, applyUnsubscribe, appliedFilters } from '../../../src/stream/subscription-change.js';
import { MalformedMessageError, type SubscribeMessage, type UnsubscribeMessage } from '../../../src/stream/client-messages.js';
import { CallMessages } from '../../../src/http/calls/messages.js';
import { CLIENT_CALLS } from '../../../src/http/calls/index.js';
import { InvalidSubscriptionError } from '../../../src/stream/errors.js';
import { StreamHub } from '../../../src/stream/hub.js';
import { StreamMetrics } from '../../../src/stream/metrics.js';
import type { Frame } from '../../../src/contracts/frame.js';
import { fakeSocket as fakeSocketOf } from '../../support/fake-socket.js';

/** A message read as the socket reads it (from the calls' declarations): the call's input. */
const reader = new CallMessages(CLIENT_CALLS);
const parseClientMessage = (text: string): any => reader.read(text).input;
const KNOWN = new Set(['BTC-PERP', 'ETH-PERP', 'SOL-PERP']);
const sub = (query = ''): Subscription => parseSubscription(new URLSearchParams(query), KNOWN);
const subscribe = (text: Record<string, unknown>) => parseClientMessage(JSON.stringify({ op: 'subscribe', id: 1, ...text })) as SubscribeMessage;
const unsubscribe = (text: Record<string, unknown>) => parseClientMessage(JSON.stringify({ op: 'unsubscribe', id: 1, ...text })) as UnsubscribeMessage;
const trade = (seq: number, market: string): Frame => ({ kind: 'trade', seq, ts: '2026-11-21T10:00:00.000Z', market, payload: {} });

describe('subscribe', () => {
  it('adds to a list, and turns a list the URL left open into the values named', () => {
    const listed = applySubscribe(sub('kinds=trade&markets=ETH-PERP'), subscribe({ markets: ['BTC-PERP'], kinds: ['candle.close'] }), KNOWN);
    expect(appliedFilters(listed)).toMatchObject({ kinds: ['trade', 'candle.close'], markets: ['ETH-PERP', 'BTC-PERP'] });
    const open = applySubscribe(sub(''), subscribe({ markets: ['BTC-PERP'] }), KNOWN);
    expect(appliedFilters(open)).toMatchObject({ kinds: null, markets: ['BTC-PERP'] });
    expect(matches(open, trade(1, 'ETH-PERP'))).toBe(false);
    expect(matches(open, trade(1, 'BTC-PERP'))).toBe(true);
  });

  it('refuses a market the engine does not list, naming it, instead of streaming every market', () => {
    const err = (() => {
      try {
        applySubscribe(sub('markets=BTC-PERP'), subscribe({ markets: ['ETH-PERP', 'btc-perp'] }), KNOWN);
      } catch (e) {
        return e;
      }
    })() as InvalidSubscriptionError;
    expect(err).toBeInstanceOf(InvalidSubscriptionError);
    expect([err.failure, err.details]).toEqual(['unknown_market', { markets: ['btc-perp'] }]);
  });

  it('sets, keeps and drops the book view with orderbook.delta', () => {
    const withView = applySubscribe(sub('kinds=trade'), subscribe({ kinds: ['orderbook.delta'], depth: 5, group: 'sig:3' }), KNOWN);
    expect(appliedFilters(withView)).toMatchObject({ kinds: ['trade', 'orderbook.delta', 'orderbook.snapshot'], book: { depth: 5, group: 'sig:3' } });
    const kept = applySubscribe(withView, subscribe({ markets: ['BTC-PERP'] }), KNOWN);
    expect(appliedFilters(kept).book).toEqual({ depth: 5, group: 'sig:3' });
    const defaulted = applySubscribe(sub('kinds=trade'), subscribe({ kinds: ['orderbook.delta'] }), KNOWN);
    expect(appliedFilters(defaulted).book).toEqual({ depth: 20, group: 'none' });
    expect(() => applySubscribe(sub('kinds=trade'), subscribe({ depth: 5 }), KNOWN)).toThrow(/orderbook\.delta/);
    expect(() => applySubscribe(sub('kinds=trade'), subscribe({ kinds: ['orderbook.delta'], depth: 1001 }), KNOWN)).toThrow(/depth/);
    const dropped = applyUnsubscribe(withView, unsubscribe({ kinds: ['orderbook.delta'] }), KNOWN);
    expect(appliedFilters(dropped).book).toBeNull();
    // The view's snapshots stay while its deltas do (ADR 0191); the message's other removals apply.
    const snapshotKept = applyUnsubscribe(withView, unsubscribe({ kinds: ['orderbook.snapshot', 'trade'] }), KNOWN);
    expect(appliedFilters(snapshotKept)).toMatchObject({ kinds: ['orderbook.delta', 'orderbook.snapshot'], book: { depth: 5, group: 'sig:3' } });
    const both = applyUnsubscribe(withView, unsubscribe({ kinds: ['orderbook.delta', 'orderbook.snapshot'] }), KNOWN);
    expect(appliedFilters(both)).toMatchObject({ kinds: ['trade'], book: null });
  });

  it('bounds what a connection holds', () => {
    let s = sub('kinds=trade');
    for (let i = 0; i < 100; i++) s = applySubscribe(s, subscribe({ intervals: ['1m'], party: [`p${i}::${'a'.repeat(64)}`] }), KNOWN);
    expect(s.parties.size).toBe(100);
    expect(() => applySubscribe(s, subscribe({ party: [`q::${'b'.repeat(64)}`] }), KNOWN)).toThrow(expect.objectContaining({ failure: 'too_many' }));
  });
});

describe('unsubscribe', () => {
  it('removes from a list; kinds and intervals left open become every value but those', () => {
    const s = applyUnsubscribe(sub('markets=BTC-PERP,ETH-PERP'), unsubscribe({ markets: ['ETH-PERP'], kinds: ['trade'], intervals: ['1m'] }), KNOWN);
    const f = appliedFilters(s);
    expect(f.markets).toEqual(['BTC-PERP']);
    expect(f.kinds).not.toContain('trade');
    expect(f.kinds).toContain('candle.close');
    expect(f.kinds).not.toContain('orderbook.delta'); // opt-in kinds are not made part of "every kind"
    expect(f.intervals).toEqual(['5m', '15m', '30m', '1h', '4h', '1d', '1w']);
  });

  it('refuses to narrow "every market" by removing one', () => {
    expect(() => applyUnsubscribe(sub(''), unsubscribe({ markets: ['BTC-PERP'] }), KNOWN)).toThrow(/every market/);
  });

  it('an emptied markets list matches no market (not every market, as rule 1 would make of it)', () => {
    const s = applyUnsubscribe(sub('markets=BTC-PERP'), unsubscribe({ markets: ['BTC-PERP'] }), KNOWN);
    expect(s.markets).toEqual(new Set());
    expect(marketsFilterMatchesNothing([], KNOWN)).toBe(false);
    expect(matches(s, trade(1, 'BTC-PERP'))).toBe(false);
    expect(matches(s, { kind: 'engine.tick_start', seq: 2, ts: '', payload: {} })).toBe(true);
  });
});

describe('reading a message', () => {
  it('refuses what is not a message, with what is wrong', () => {
    expect(() => parseClientMessage('nope')).toThrow(MalformedMessageError);
    expect(() => parseClientMessage('[1]')).toThrow(/JSON object/);
    expect(() => parseClientMessage('{"op":"dance","id":1}')).toThrow(/"op" must be one of/);
    expect(() => parseClientMessage('{"op":"subscribe"}')).toThrow(/"id"/);
    expect(() => parseClientMessage('{"op":"subscribe","id":"x".concat}')).toThrow(MalformedMessageError);
    expect(() => parseClientMessage('{"op":"subscribe","id":1,"kinds":"trade"}')).toThrow(/array of strings/);
    expect(() => parseClientMessage('{"op":"subscribe","id":1,"kinds":["trades"]}')).toThrow(InvalidSubscriptionError);
    expect(() => parseClientMessage('{"op":"subscribe","id":1,"user":"u"}')).toThrow(/all of "user", "sessionId" and "sig"/);
    expect(() => parseClientMessage('{"op":"unsubscribe","id":1,"depth":3}')).toThrow(/unknown field "depth"/);
    expect(() => parseClientMessage('{"op":"order.place","id":1,"body":{}}')).toThrow(/"body"/);
    expect(() => parseClientMessage('{"op":"order.cancel","id":1}')).toThrow(/"orderId"/);
    expect(() => parseClientMessage(JSON.stringify({ op: 'subscribe', id: 1, markets: Array.from({ length: 101 }, (_, i) => `M${i}`) }))).toThrow(
      expect.objectContaining({ failure: 'too_many' }),
    );
  });

  it('reads the four ops', () => {
    expect(parseClientMessage('{"op":"subscribe","id":"a","kinds":["trade"],"depth":5}')).toMatchObject({ op: 'subscribe', id: 'a', lists: { kinds: ['trade'] }, depth: '5' });
    const place = reader.read('{"op":"order.place","id":2,"body":"{}","user":"u","sessionId":"s","sig":"1.ab"}');
    expect([place.op, place.id, String(parseClientMessage('{"op":"order.place","id":2,"body":"{}"}').body())]).toEqual(['order.place', 2, '{}']);
    expect((place.input as { signature: () => unknown }).signature()).toEqual({ user: 'u', sessionId: 's', sig: '1.ab' });
    const cancel = reader.read('{"op":"order.cancel","id":3,"orderId":"o-1"}');
    expect([cancel.op, cancel.id, (cancel.input as { orderId: string }).orderId]).toEqual(['order.cancel', 3, 'o-1']);
    // No signing values: refused as REST refuses missing signing headers, once the call runs.
    expect(() => (cancel.input as { signature: () => unknown }).signature()).toThrow(/signed request required/);
  });
});

type SentMessage = Record<string, any>;
const fakeSocket = () => fakeSocketOf<SentMessage>();

describe('the hub swapping a connection\'s filters', () => {
  it('sends the ack, then the snapshot of what was added only, then live frames of the new filters', async () => {
    const state = {
      epoch: () => 'e1',
      ready: () => true,
      whenReady: () => Promise.resolve(),
      head: () => 10,
      // The state a connection with these filters would get on opening: a trade snapshot per market it takes.
      snapshot: (s: Subscription) => ({ frames: [...KNOWN].map((m) => trade(10, m)).filter((f) => matches(s, f)), later: null }),
    };
    const hub = new StreamHub({ enabled: true, bufferBytes: 1 << 20, pingMs: 60_000, historySize: 10, metrics: StreamMetrics.for(new Registry()), logger: pino({ level: 'silent' }) as never, state });
    const { ws, sent } = fakeSocket();
    const client = hub.add(ws, sub('kinds=trade&markets=BTC-PERP&snapshot=false'));
    await client.opening;
    hub.publish(trade(11, 'BTC-PERP'));
    hub.publish(trade(11, 'ETH-PERP'));
    const next = applySubscribe(client.sub, subscribe({ markets: ['ETH-PERP'] }), KNOWN);
    const live = hub.resubscribe(client, next, (s, head) => ({ kind: 'stream.ack', seq: head, id: 1, payload: appliedFilters(s) }), true);
    // Published while the swap is going live: held, then sent after the snapshot.
    hub.publish(trade(12, 'ETH-PERP'));
    await live;
    hub.publish(trade(13, 'SOL-PERP'));
    hub.publish(trade(13, 'BTC-PERP'));
    expect(sent.map((m) => [m.kind, m.seq, m.market, m.snapshot ?? false])).toEqual([
      ['trade', 11, 'BTC-PERP', false],
      ['stream.ack', 10, undefined, false],
      ['trade', 10, 'ETH-PERP', true], // BTC-PERP's snapshot is not sent again: the connection had it
      ['trade', 12, 'ETH-PERP', false],
      ['trade', 13, 'BTC-PERP', false],
    ]);
    expect(client.held).toBeNull();
  });
});
