// Disarm a switch: the socket's `switch.disarm`.
import { Type } from 'typebox';
import { MessageIdField } from '../../stream/message-schemas.js';
import { declareCall } from './declaration.js';
import { SwitchName, SwitchParty, switchLane, switchOf } from './switch-arm.js';

export const SwitchDisarmOp = Type.Object(
  { op: Type.Literal('switch.disarm'), id: MessageIdField, party: SwitchParty, name: SwitchName },
  { additionalProperties: false, description: 'Disarms the switch; stream.answer {name, disarmed}.' },
);

export const switchDisarm = declareCall<{ party: string; name: string }>({
  op: 'switch.disarm',
  rest: null,
  summary: 'Disarms the switch.',
  message: SwitchDisarmOp,
  answer: null,
  // One request of the address budget, charged by the pipeline inside the switch's ordered lane (ADR 0321).
  budget: { weight: () => 1, party: 'none', ordered: switchLane },
  lane: 'switch',
  heldParty: (s) => s.party,
  fromMessage: switchOf,
  handle: async (s, env) => ({ value: await env.trading.deadMansSwitch.disarm(s.party, s.name) }),
});
