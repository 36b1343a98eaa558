// Arm (or re-arm) the dead man's switch: the socket's `switch.arm` (docs/trading.md "Dead man's
// switch"). The switch itself is trading/dead-mans-switch.ts.
import { Type } from 'typebox';
import { Party } from '../../contracts/wire.js';
import { MessageIdField, SIGNING_VALUE_PATTERN } from '../../stream/message-schemas.js';
import type { ArmRequest } from '../trading/dead-mans-switch.js';
import { declareCall } from './declaration.js';
import { batchWeight } from '../trading/batch.js';

const strict = { additionalProperties: false } as const;
export const SwitchParty = { ...Party, description: 'The party of the switch; the connection must hold it (proven by the URL or a subscribe)' };
export const SwitchName = Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\x20-\\x7E]+$', description: 'Which switch of the party (default "default")' }));
/** The switch a message names: its party's, by name ("default" when it names none). */
export const switchOf = (m: Record<string, unknown>) => ({ party: m.party as string, name: (m.name as string | undefined) ?? 'default' });
/** One switch's ordered lane in the pipeline: its arms, heartbeats and disarms are charged and applied in arrival order (ADR 0200, 0321). */
export const switchLane = (s: { party: string; name: string }): string => `switch\n${s.party}\n${s.name}`;

export const SwitchArmOp = Type.Object(
  {
    op: Type.Literal('switch.arm'),
    id: MessageIdField,
    party: SwitchParty,
    sessionId: Type.String({ minLength: 1, maxLength: 1024, pattern: SIGNING_VALUE_PATTERN, description: 'The session whose key signed the cancels' }),
    name: SwitchName,
    timeoutMs: Type.Integer({ minimum: 1_000, maximum: 30_000, description: 'Fires this long after the last arm or heartbeat' }),
    cancels: Type.Array(
      Type.Object(
        {
          orderId: Type.String({ minLength: 1, maxLength: 64 }),
          sig: Type.String({ minLength: 1, maxLength: 1024, pattern: SIGNING_VALUE_PATTERN, description: 'X-Session-Sig of DELETE /v1/orders/<encodeURIComponent(orderId)>, timestamped ahead (up to +30 s)' }),
        },
        strict,
      ),
      { maxItems: 200, description: 'Signed cancels of the open orders to cancel when it fires (replaces those held)' },
    ),
  },
  {
    ...strict,
    description:
      'Arms (or re-arms, which is also a heartbeat) the dead man\'s switch: answered by stream.answer {name, cancels, timeoutMs, fireAt, validUntil} or stream.error (docs/trading.md "Dead man\'s switch").',
  },
);

export const switchArm = declareCall<ArmRequest>({
  op: 'switch.arm',
  rest: null,
  summary: 'Arms the dead man\'s switch with signed cancels (docs/trading.md "Dead man\'s switch"); also a heartbeat.',
  message: SwitchArmOp,
  answer: null,
  // Its cancels' checks cost what a batch's do: charged as a batch of that many items, by the
  // pipeline inside the switch's ordered lane, so a later disarm cannot overtake it (ADR 0321).
  budget: { weight: (a) => batchWeight(a.cancels.length), party: 'none', ordered: switchLane },
  lane: 'switch',
  heldParty: (a) => a.party,
  fromMessage: (m) => ({ ...switchOf(m), sessionId: m.sessionId as string, timeoutMs: m.timeoutMs as number, cancels: m.cancels as ArmRequest['cancels'] }),
  handle: async (a, env) => ({ value: await env.trading.deadMansSwitch.arm(a, env.connection?.address) }),
});
