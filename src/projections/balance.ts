// balance.update: one frame per fill leg (docs/stream.md "Frames"), the leg's `newBalance`.
// Stateless. Deposits and withdrawals reach the client as the passthrough events that carry
// `newBalance` themselves (inbound.deposit, engine.approve_submitted).
import { normalizeDecimal } from '../decimal.js';
import { asFill } from './fill.js';
import type { EngineEvent } from '../contracts/engine-event.js';
import type { Frame } from '../contracts/frame.js';

export function projectBalances(event: EngineEvent, fill = asFill(event)): Frame[] {
  if (!fill) return [];
  return fill.legs.map((leg) => ({
    kind: 'balance.update',
    seq: event.seq,
    ts: event.ts,
    userParty: leg.party,
    payload: { balance: normalizeDecimal(leg.newBalance), asOfSeq: event.seq },
  }));
}
