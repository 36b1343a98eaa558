// docs/verification.md's worked example of verifyAccount, read from the page: its committed events
// replay by the rules without a difference to the state the page states, and the tampering it
// describes gives the message it quotes.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatWire, Ledger, type LedgerEvent } from '../../../packages/client/src/verify/ledger.js';

const doc = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../../../docs/verification.md'), 'utf8');
const section = doc.slice(doc.indexOf('### Worked example (a test replays it)'), doc.indexOf('## Verify it yourself'));
const events = /```jsonl\n([\s\S]*?)\n```/.exec(section)![1]!.split('\n').map((l) => JSON.parse(l) as LedgerEvent);
const row = (name: string) => new RegExp(`^\\| ${name} \\| (.*) \\|$`, 'm').exec(section)![1]!;
const party = events[0]!.party!;

function replay(list: LedgerEvent[]): Ledger {
  const ledger = new Ledger(party);
  for (const e of list) ledger.apply(e);
  return ledger;
}

describe("docs/verification.md's worked example", () => {
  it('replays without a difference to the state the page gives', () => {
    expect(events.map((e) => e.seq)).toEqual([1, 7, 12, 17, 18, 20]);
    const ledger = replay(events);
    expect(ledger.discrepancies).toEqual([]);
    expect(formatWire(ledger.balance)).toBe(row('collateral'));
    const [id, size, entry, pnl] = /^(\S+), size (\S+), entry (\S+), realized PnL (\S+)$/.exec(row('BTC-PERP position'))!.slice(1);
    const pos = ledger.positions.get('BTC-PERP')!;
    expect([pos.positionId, formatWire(pos.size), formatWire(pos.entryPrice), formatWire(pos.realizedPnl)]).toEqual([id, size, entry, pnl]);
    const [depositId, amount] = /^(\S+) \((\S+), tx/.exec(row('deposits credited'))!.slice(1);
    expect(formatWire(ledger.deposits.get(depositId!)!.amount)).toBe(amount);
    const [withdrawalId, wAmount] = /^(\S+) \((\S+)\)$/.exec(row('withdrawals debited'))!.slice(1);
    expect(formatWire(ledger.withdrawals.get(withdrawalId!)!.amount)).toBe(wAmount);
    // The closed epoch's final realized PnL, as the page says.
    const closing = (events[3]!.payload.legs as Array<Record<string, string>>)[0]!;
    expect(section).toContain(`The closed epoch \`${closing.positionId}\` ended with realized PnL ${closing.realizedPnl!.replace('-', '−')}`);
  });

  it('names the tampered fee in the words the page quotes', () => {
    const [, fee, balance] = /\(fee `(\S+)`, balance `(\S+)`\)/.exec(section)!;
    const tampered = structuredClone(events);
    const leg = (tampered[2]!.payload.legs as Array<Record<string, string>>).find((l) => l.party === party)!;
    leg.fee = fee!;
    leg.newBalance = balance!;
    const ledger = replay(tampered);
    expect(ledger.discrepancies[0]).toMatchObject({ seq: 12, field: 'fee', expected: '3.0000500000', actual: fee });
    const quoted = /^> (.*)$/m.exec(section)![1];
    expect(ledger.discrepancies[0]!.message).toBe(quoted);
    // The balance claim after it differs too: it is the same overcharge.
    expect(ledger.discrepancies[1]).toMatchObject({ seq: 12, field: 'newBalance', expected: '99981.9999500000', actual: balance });
  });
});
