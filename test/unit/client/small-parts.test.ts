import { describe, expect, it } from 'vitest';
import { backoffDelay, buildTarget, createToastThrottle, GatewayError, isRetryableStatus, PositionsStore } from '../../../packages/client/src/index.js';

describe('GatewayError', () => {
  it.each([
    [0, { isNetwork: true, isServer: false, isNotFound: false, isUnauthorized: false }],
    [401, { isNetwork: false, isServer: false, isNotFound: false, isUnauthorized: true }],
    [403, { isNetwork: false, isServer: false, isNotFound: false, isUnauthorized: true }],
    [404, { isNetwork: false, isServer: false, isNotFound: true, isUnauthorized: false }],
    [429, { isNetwork: false, isServer: false, isNotFound: false, isUnauthorized: false }],
    [500, { isNetwork: false, isServer: true, isNotFound: false, isUnauthorized: false }],
    [504, { isNetwork: false, isServer: true, isNotFound: false, isUnauthorized: false }],
  ])('status %i sets the right flags', (status, flags) => {
    const e = new GatewayError(status, '/v1/x', { error: 'boom', code: 'c' });
    expect({ isNetwork: e.isNetwork, isServer: e.isServer, isNotFound: e.isNotFound, isUnauthorized: e.isUnauthorized }).toEqual(flags);
    expect(e.code).toBe('c');
    expect(e.path).toBe('/v1/x');
  });
});

describe('retry policy', () => {
  it('doubles the delay per attempt with half of it jittered, capped', () => {
    const p = { baseDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4].map((a) => backoffDelay({ ...p, random: () => 0 }, a))).toEqual([50, 100, 200, 400, 500]);
    expect([0, 1, 2, 3, 4].map((a) => backoffDelay({ ...p, random: () => 0.999999 }, a))).toEqual([100, 200, 400, 800, 1000]);
  });
  it('retries network failures and 5xx only', () => {
    expect([0, 400, 401, 404, 429, 499, 500, 502, 503].map(isRetryableStatus)).toEqual([true, false, false, false, false, false, true, true, true]);
  });
});

describe('buildTarget', () => {
  it('leaves out undefined/null and joins lists with commas', () => {
    expect(buildTarget('/v1/fills', { limit: 5, user: undefined, market: null, before: 9 })).toBe('/v1/fills?limit=5&before=9');
    expect(buildTarget('/v1/stream', { kinds: ['trade', 'candle.close'] })).toBe('/v1/stream?kinds=trade%2Ccandle.close');
    expect(buildTarget('/v1/x', {})).toBe('/v1/x');
  });
});

describe('toast throttle', () => {
  it('shows at most one toast per 30 s', () => {
    let t = 0;
    const shown: number[] = [];
    const throttle = createToastThrottle(30_000, () => t);
    for (const at of [0, 1_000, 29_999, 30_000, 45_000, 60_001]) {
      t = at;
      throttle(() => shown.push(at));
    }
    expect(shown).toEqual([0, 30_000, 60_001]);
  });
});

describe('PositionsStore', () => {
  const party = `alice::${'a'.repeat(64)}`;
  const frame = (seq: number, positionId: string, size: string, realizedPnl: string) => ({
    kind: 'position.update' as const,
    ts: '2026-11-21T10:00:00.000Z',
    seq,
    market: 'BTC-PERP',
    userParty: party,
    payload: { positionId, size, entryPrice: '100.0000000000', realizedPnl, asOfSeq: seq },
  });

  it('keys by positionId, so a flip keeps the closed epoch and the new one apart', () => {
    const s = new PositionsStore(party);
    s.applyFrame(frame(1, 'p1', '1.0000000000', '0.0000000000'));
    s.applyFrame(frame(5, 'p1', '0.0000000000', '7.0000000000'));
    s.applyFrame(frame(5, 'p2', '-2.0000000000', '0.0000000000'));
    expect(s.open().map((p) => [p.positionId, p.size, p.realizedPnl])).toEqual([['p2', '-2.0000000000', '0.0000000000']]);
    expect(s.get('p1')?.realizedPnl).toBe('7.0000000000');
    expect(s.all()).toHaveLength(2);
  });

  it('ignores older updates and other parties', () => {
    const s = new PositionsStore(party);
    s.applyFrame(frame(9, 'p1', '3.0000000000', '0.0000000000'));
    expect(s.applyFrame(frame(8, 'p1', '1.0000000000', '0.0000000000'))).toBe(false);
    expect(s.applyFrame({ ...frame(10, 'p9', '1.0000000000', '0.0000000000'), userParty: 'bob::x' })).toBe(false);
    expect(s.get('p1')?.size).toBe('3.0000000000');
  });

  it('applies the legs of a backfilled fill event, a flip included', () => {
    const s = new PositionsStore(party);
    s.applyFrame(frame(1, 'p1', '1.0000000000', '0.0000000000'));
    const applied = s.applyEvent({
      seq: 12,
      kind: 'engine.order_filled',
      ts: '2026-11-21T10:00:01.000Z',
      market: 'BTC-PERP',
      payload: {
        legs: [
          { party, positionId: 'p1', positionSize: '0.0000000000', entryPrice: '100.0000000000', realizedPnl: '4.0000000000' },
          { party, positionId: 'p3', positionSize: '-1.0000000000', entryPrice: '104.0000000000', realizedPnl: '0.0000000000' },
          { party: 'bob::x', positionId: 'b1', positionSize: '1.0000000000', entryPrice: '104.0000000000', realizedPnl: '0.0000000000' },
        ],
      },
    });
    expect(applied).toBe(2);
    expect(s.open().map((p) => p.positionId)).toEqual(['p3']);
    expect(s.get('p1')).toMatchObject({ size: '0.0000000000', realizedPnl: '4.0000000000', asOfSeq: 12 });
  });
});
