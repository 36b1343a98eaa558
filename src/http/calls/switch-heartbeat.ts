// Push an armed switch's deadline: the socket's `switch.heartbeat`.
import { Type } from 'typebox';
import { MessageIdField } from '../../stream/message-schemas.js';
import { declareCall } from './declaration.js';
import { SwitchName, SwitchParty, switchLane, switchOf } from './switch-arm.js';

export const SwitchHeartbeatOp = Type.Object(
  { op: Type.Literal('switch.heartbeat'), id: MessageIdField, party: SwitchParty, name: SwitchName },
  { additionalProperties: false, description: 'Pushes the armed switch\'s deadline to now + its timeout; stream.answer as switch.arm, or stream.error 404 when none is armed (it fired).' },
);

export const switchHeartbeat = declareCall<{ party: string; name: string }>({
  op: 'switch.heartbeat',
  rest: null,
  summary: 'Pushes the armed switch\'s deadline to now + its timeout.',
  message: SwitchHeartbeatOp,
  answer: null,
  // One request of the address budget, charged by the pipeline inside the switch's ordered lane (ADR 0321).
  budget: { weight: () => 1, party: 'none', ordered: switchLane },
  lane: 'switch',
  heldParty: (s) => s.party,
  fromMessage: switchOf,
  handle: async (s, env) => ({ value: await env.trading.deadMansSwitch.heartbeat(s.party, s.name) }),
});
