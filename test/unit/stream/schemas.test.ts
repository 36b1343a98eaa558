import { describe, expect, it } from 'vitest';
import { Value } from 'typebox/value';
import { initialProjectionState, project } from '../../../src/projections/index.js';
import { schemaFor } from '../../../src/stream/frame-kinds.js';
import { simpleMatch, tick } from '../projections/fixtures.js';

describe('frame schemas', () => {
  it('accept every frame the projections make', () => {
    const state = initialProjectionState();
    const frames = [simpleMatch(1, '2026-11-21T10:00:05.000Z', '100', '1'), tick(2, '2026-11-21T10:01:00.000Z')].flatMap((e) => project(state, e).frames);
    expect(new Set(frames.map((f) => f.kind))).toEqual(
      new Set(['engine.order_filled', 'position.update', 'balance.update', 'trade', 'candle.update', 'candle.close', 'engine.tick_start']),
    );
    for (const f of frames) expect(Value.Check(schemaFor(f.kind)!, f), f.kind).toBe(true);
  });

  it('reject frames that break the wire rules', () => {
    const state = initialProjectionState();
    const [, position] = project(state, simpleMatch(1, '2026-11-21T10:00:05.000Z', '100', '1')).frames;
    const check = (f: unknown) => Value.Check(schemaFor('position.update')!, f);
    expect(check(position)).toBe(true);
    expect(check({ ...position, payload: { ...position!.payload, size: '1.5' } })).toBe(false); // not 10 places
    expect(check({ ...position, payload: { ...position!.payload, size: 1.5 } })).toBe(false); // a number
    expect(check({ ...position, userParty: 'alice' })).toBe(false);
    expect(check({ ...position, extra: true })).toBe(false);
    expect(Value.Check(schemaFor('trade')!, { kind: 'trade', seq: 1, ts: 'yesterday', market: 'BTC-PERP', payload: {} })).toBe(false);
    expect(schemaFor('engine.unknown')).toBeUndefined();
  });
});

describe('frame serialisation', () => {
  it('writes exactly the JSON of the frame for every kind, escaping envelope strings', async () => {
    const { serializeFrame } = await import('../../../src/stream/serialize.js');
    const state = initialProjectionState();
    const odd = { ...simpleMatch(1, '2026-11-21T10:00:05.000Z', '100', '1'), market: 'WEIRD"\\PERP' };
    const frames = [odd, simpleMatch(2, '2026-11-21T10:00:06.000Z', '101.25', '0.5'), tick(3, '2026-11-21T10:01:00.000Z')].flatMap((e) => project(state, e).frames);
    expect(frames.some((f) => f.kind === 'candle.close')).toBe(true);
    for (const f of frames) expect(JSON.parse(serializeFrame(f))).toEqual(f);
  });
});
