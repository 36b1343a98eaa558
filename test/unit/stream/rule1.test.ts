// Rule 1 judged again when the engine's market list loads or changes (for connections already in
// the hub's index), the `control` opt-in, and the order book poller telling about list changes.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { Registry } from 'prom-client';
import { InvalidSubscriptionError } from '../../../src/stream/errors.js';
import { judgeMarketsFilter, parseSubscription } from '../../../src/stream/subscription.js';
import { StreamHub } from '../../../src/stream/hub.js';
import { StreamMetrics } from '../../../src/stream/metrics.js';
import { History } from '../../../src/stream/history.js';
import { framedText } from '../../../src/stream/framed-text.js';
import { OrderbookPoller } from '../../../src/engine/orderbook-poller.js';
import type { EngineClient } from '../../../src/engine/client.js';
import type { Frame } from '../../../src/contracts/frame.js';
import { fakeSocket as fakeSocketOf } from '../../support/fake-socket.js';

const q = (s: string) => new URLSearchParams(s);
const logger = pino({ level: 'silent' });

type Sent = { kind: string; seq?: number; market?: string; payload: Record<string, unknown> };
const fakeSocket = () => fakeSocketOf<Sent>();

const hub = () =>
  new StreamHub({ enabled: true, bufferBytes: 1 << 20, pingMs: 60_000, historySize: 10, metrics: StreamMetrics.for(new Registry()), logger: logger as never });
const trade = (seq: number, market: string): Frame => ({ kind: 'trade', seq, ts: '2026-11-21T10:00:00.000Z', market, payload: {} });

describe('control opt-in', () => {
  it('is off by default, on with control=true or since, and anything else than true/false is a 400', () => {
    expect(parseSubscription(q(''), null).control).toBe(false);
    expect(parseSubscription(q('control=false'), null).control).toBe(false);
    expect(parseSubscription(q('control=true'), null).control).toBe(true);
    expect(parseSubscription(q('since=3'), null).control).toBe(true);
    for (const bad of ['control=1', 'control=TRUE', 'control=', 'control=true&control=true']) {
      expect(() => parseSubscription(q(bad), null)).toThrow(InvalidSubscriptionError);
    }
  });

  it('the hub sends stream.subscribed only to opted-in connections', () => {
    const h = hub();
    const plain = fakeSocket();
    const opted = fakeSocket();
    h.add(plain.ws, parseSubscription(q(''), null));
    h.add(opted.ws, parseSubscription(q('control=true'), null));
    h.publish(trade(1, 'BTC-PERP'));
    expect(plain.sent.map((m) => m.kind)).toEqual(['trade']);
    expect(opted.sent.map((m) => m.kind)).toEqual(['stream.subscribed', 'trade']);
  });
});

describe('rule 1 re-judged', () => {
  it('judgeMarketsFilter follows the list both ways and says when it changed', () => {
    const sub = parseSubscription(q('markets=btc-perp'), null);
    expect(sub.markets).toEqual(new Set(['btc-perp']));
    expect(judgeMarketsFilter(sub, null)).toBe(false);
    expect(judgeMarketsFilter(sub, new Set(['BTC-PERP']))).toBe(true);
    expect(sub).toMatchObject({ markets: null, marketsIgnored: true });
    expect(judgeMarketsFilter(sub, new Set(['BTC-PERP', 'ETH-PERP']))).toBe(false);
    expect(judgeMarketsFilter(sub, new Set(['BTC-PERP', 'btc-perp']))).toBe(true);
    expect(sub).toMatchObject({ markets: new Set(['btc-perp']), marketsIgnored: false });
    const none = parseSubscription(q(''), null);
    expect(judgeMarketsFilter(none, new Set(['BTC-PERP']))).toBe(false);
    expect(none.markets).toBeNull();
  });

  it('the hub moves open connections in its index when the list loads and when it changes', () => {
    const h = hub();
    const typo = fakeSocket();
    const btc = fakeSocket();
    h.add(typo.ws, parseSubscription(q('markets=btc-perp&kinds=trade&control=true'), null));
    h.add(btc.ws, parseSubscription(q('markets=BTC-PERP&kinds=trade'), null));
    h.publish(trade(1, 'BTC-PERP'));
    h.setKnownMarkets(new Set(['BTC-PERP', 'ETH-PERP']));
    h.publish(trade(2, 'ETH-PERP'));
    h.publish(trade(3, 'BTC-PERP'));
    h.setKnownMarkets(new Set(['BTC-PERP', 'btc-perp'])); // the asked market appears: the filter applies again
    h.publish(trade(4, 'BTC-PERP'));
    h.publish(trade(5, 'btc-perp'));
    expect(typo.sent.filter((m) => m.kind === 'trade').map((m) => m.seq)).toEqual([2, 3, 5]);
    expect(typo.sent.filter((m) => m.kind === 'stream.subscribed').map((m) => m.payload.marketsIgnored)).toEqual([false, true, false]);
    expect(btc.sent.map((m) => `${m.kind}:${m.seq}`)).toEqual(['trade:1', 'trade:3', 'trade:4']);
    expect(h.size).toBe(2);
  });

  it('a connection parsed before the list was known, added after it loaded, is judged against it', () => {
    const h = hub();
    h.setKnownMarkets(new Set(['BTC-PERP']));
    const late = fakeSocket();
    h.add(late.ws, parseSubscription(q('markets=btc-perp&kinds=trade'), null)); // the upgrade saw no list
    h.publish(trade(1, 'BTC-PERP'));
    expect(late.sent.map((m) => m.seq)).toEqual([1]);
  });
});

describe('order book poller market list', () => {
  it('calls onMarkets on the first load and on each change, not when unchanged', async () => {
    let markets: unknown = { markets: [{ symbol: 'BTC-PERP', status: 'active' }] };
    let fail = true;
    const engine = {
      getJson: async (path: string) => {
        if (path === '/v1/markets') {
          if (fail) throw new Error('engine down');
          return markets;
        }
        return { market: 'x', seq: 1, bids: [], asks: [] };
      },
    } as unknown as EngineClient;
    const seen: string[][] = [];
    const poller = new OrderbookPoller({ engine, depth: 5, pollMs: 1000, marketsRefreshMs: 0, onFrame: () => {}, onMarkets: (k) => seen.push([...k]), logger: logger as never });
    await poller.pollOnce();
    expect(seen).toEqual([]);
    fail = false;
    await poller.pollOnce();
    await poller.pollOnce();
    markets = { markets: [{ symbol: 'BTC-PERP', status: 'active' }, { symbol: 'ETH-PERP', status: 'active' }] };
    await poller.pollOnce();
    markets = { markets: [{ symbol: 'ETH-PERP', status: 'active' }, { symbol: 'BTC-PERP', status: 'active' }] };
    await poller.pollOnce();
    expect(seen).toEqual([['BTC-PERP'], ['BTC-PERP', 'ETH-PERP']]);
  });
});

describe('replay history reset', () => {
  it('drops the old history and is complete after the new head', () => {
    const h = new History(3);
    const entry = (seq: number) => ({ frame: { kind: 'trade', seq, ts: '2026-11-21T10:00:00.000Z', payload: {} }, ...framedText(String(seq)) });
    for (const s of [5, 6, 7]) h.push(entry(s));
    h.reset(0);
    expect(h.size).toBe(0);
    expect(h.coveredAfter).toBe(0);
    h.push(entry(1));
    expect([...h.after(0)].map((e) => e.frame.seq)).toEqual([1]);
  });
});
