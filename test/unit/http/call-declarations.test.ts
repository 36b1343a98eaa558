// The client calls are declared once (src/http/calls/): the socket reads each op with its declared
// schema and fields, and every call waits in the lane it declares, with the bound and the message
// the connection's queues have always had.
import { describe, expect, it } from 'vitest';
import { CLIENT_CALLS } from '../../../src/http/calls/index.js';
import { CallMessages } from '../../../src/http/calls/messages.js';
import { ConnectionLanes, LANES } from '../../../src/http/calls/lanes.js';
import { switchArm } from '../../../src/http/calls/switch-arm.js';
import { switchHeartbeat } from '../../../src/http/calls/switch-heartbeat.js';
import { switchDisarm } from '../../../src/http/calls/switch-disarm.js';

describe('client call declarations', () => {
  it('each socket op is its message schema\'s `op` literal, declared once, with a reader', () => {
    const ops = CLIENT_CALLS.flatMap((c) => (c.op === null ? [] : [c.op]));
    expect(new Set(ops).size).toBe(ops.length);
    for (const call of CLIENT_CALLS) {
      if (call.op === null) continue;
      const schema = call.message as { properties: { op: { const: string } } };
      expect(schema.properties.op.const, call.op).toBe(call.op);
      expect(call.fromMessage, call.op).toBeTypeOf('function');
    }
  });

  it('the fields a message may carry are its schema\'s', () => {
    const reader = new CallMessages(CLIENT_CALLS);
    expect(() => reader.read('{"op":"switch.heartbeat","id":1,"party":"p","cancels":[]}')).toThrow('unknown field "cancels" for op switch.heartbeat (allowed: op, id, party, name)');
    expect(() => reader.read('{"op":"order.status","id":1,"party":"x","clientOrderId":""}')).toThrow(/does not fit order.status/);
  });
});

describe('per-connection lanes', () => {
  it('refuses the call past a lane\'s bound with its own message, while the other lanes still take calls', async () => {
    const lanes = new ConnectionLanes();
    const release: Array<() => void> = [];
    const held = () => new Promise<void>((r) => release.push(r));
    for (let i = 0; i < LANES.switch.max; i++) lanes.enter('switch', held);
    expect(() => lanes.enter('switch', held)).toThrow(expect.objectContaining({ code: 'rate_limited', message: LANES.switch.full, extra: { retryAfterS: 1 } }));
    expect(() => lanes.enter('orders', held)).not.toThrow();
    release.shift()!();
    // One turn of the event loop (not a sleep): the released call leaves its lane.
    await new Promise((r) => setTimeout(r, 0));
    expect(() => lanes.enter('switch', held)).not.toThrow();
  });

  it('the switch calls declare what they spend and share one ordered lane per switch (ADR 0321)', () => {
    const cancels = (n: number) => Array.from({ length: n }, (_, i) => ({ orderId: `o-${i}`, sig: '1.ab' }));
    const arm = (n: number, name = 'default') => ({ party: 'p', name, sessionId: 's', timeoutMs: 5_000, cancels: cancels(n) });
    // A batch's weight of its cancels: 1 per 10 (docs/trading.md "Batch weights").
    expect([0, 1, 10, 11, 200].map((n) => switchArm.budget.weight(arm(n)))).toEqual([1, 1, 1, 2, 20]);
    expect(switchHeartbeat.budget.weight({ party: 'p', name: 'default' })).toBe(1);
    expect(switchDisarm.budget.weight({ party: 'p', name: 'default' })).toBe(1);
    const lane = switchArm.budget.ordered!(arm(3));
    expect(switchHeartbeat.budget.ordered!({ party: 'p', name: 'default' })).toBe(lane);
    expect(switchDisarm.budget.ordered!({ party: 'p', name: 'default' })).toBe(lane);
    expect(switchDisarm.budget.ordered!({ party: 'p', name: 'other' })).not.toBe(lane);
    expect(switchDisarm.budget.ordered!({ party: 'q', name: 'default' })).not.toBe(lane);
  });

  it('runs a serial lane one call after the other, in order', async () => {
    const lanes = new ConnectionLanes();
    const log: string[] = [];
    let releaseA!: () => void;
    let doneB!: () => void;
    const bDone = new Promise<void>((r) => (doneB = r));
    lanes.enter('changes', async () => {
      log.push('start a');
      await new Promise<void>((r) => (releaseA = r));
      log.push('end a');
    });
    lanes.enter('changes', async () => {
      log.push('b');
      doneB();
    });
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['start a']);
    releaseA();
    await bDone;
    expect(log).toEqual(['start a', 'end a', 'b']);
  });
});
