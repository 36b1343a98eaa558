// "Verify my account": the party's collateral and positions recomputed in this browser from the
// events the chain committed, by the engine's published rules (verifyAccount, docs/verification.md
// "Your account"), shown beside what the screen shows (the gateway's account view), each marked
// verified, pending (not committed yet) or different, with the first discrepancy in plain words.
// Its own panel and module: it only reads through the published client.
import type { AccountProblem, AccountVerdict, CheckedValue, GatewayClient } from '@gateway/client';
import { escapeHtml, trim } from './format.js';
import { VerifyPanel, type PanelMetrics } from './verify-panel.js';

/** The last run, as the browser test reads it. */
interface AccountRun {
  status: string;
  events: number;
  legs: number;
  first: string | null;
  ms: number;
  /** With an uncommitted tail: what is verified is up to this seq, and how many changes come after it (ADR 0182). */
  pendingAfterSeq: number | null;
  pendingCount: number;
}
/** Read by the browser test. */
export type AccountVerificationMetrics = PanelMetrics<AccountRun>;

const PANEL = `
  <h2>My account, recomputed from the chain</h2>
  <div class="verify-bar">
    <button id="verify-account" type="button">Verify my account</button>
    <span id="account-verify-summary" class="dim" role="status">collateral and positions, recomputed from your committed events</span>
  </div>
  <p id="account-verify-first" class="bad" role="alert" hidden></p>
  <table id="account-verify"></table>`;

const LABEL: Record<CheckedValue['status'], string> = { verified: 'verified', pending: 'pending', different: 'DIFFERENT' };
const CLASS: Record<CheckedValue['status'], string> = { verified: 'good', pending: 'dim', different: 'bad' };

const money = (v: string | null | undefined): string => (v === null || v === undefined ? '—' : trim(v));

/** The first problem, as a trader would say it. */
export function inWords(p: AccountProblem): string {
  if (p.kind === 'event') {
    const trade = p.trade ? `your ${p.trade.side} of ${trim(p.trade.size)} ${p.market ?? ''} at ${trim(p.trade.price)} (event #${p.seq})` : `event #${p.seq}`;
    const got = money(p.actual);
    const want = money(p.expected);
    switch (p.field) {
      case 'fee':
        return `The fee charged on ${trade} is ${got}; the published fee (0.05 % of the notional for a taker, nothing for a maker) is ${want}.`;
      case 'entryPrice':
        return `After ${trade} your entry price was recorded as ${got}; averaging your fills gives ${want}.`;
      case 'realizedPnl':
        return `The profit or loss realized by ${trade} was recorded as ${got}; it should be ${want}.`;
      case 'positionSize':
        return `After ${trade} your position was recorded as ${got}; your fills add up to ${want}.`;
      case 'newBalance':
        return p.eventKind === 'inbound.deposit'
          ? `Your deposit at event #${p.seq} was not credited as it should be: the balance after it was recorded as ${got} instead of ${want}.`
          : p.eventKind === 'engine.approve_submitted'
            ? `Your withdrawal at event #${p.seq} was debited wrongly: the balance after it was recorded as ${got} instead of ${want}.`
            : `After ${trade} your balance was recorded as ${got}; it should be ${want}.`;
      default:
        return `${p.message[0]!.toUpperCase()}${p.message.slice(1)}.`;
    }
  }
  if (p.kind === 'view') {
    const what = p.field === 'collateral' ? 'collateral' : p.field === 'position' ? `${p.market} position` : `${p.market} ${p.field === 'entryPrice' ? 'entry price' : p.field === 'realizedPnl' ? 'realized PnL' : 'position size'}`;
    return `The ${what} shown on this screen (${money(p.actual)}) is not what your committed history gives (${money(p.expected)}).`;
  }
  return `${p.message[0]!.toUpperCase()}${p.message.slice(1)}.`;
}

export class AccountVerificationPanel extends VerifyPanel<AccountRun> {
  private verdict: AccountVerdict | null = null;

  constructor(
    private readonly client: GatewayClient,
    /** The party shown (the console's party switcher changes it). */
    public party: string,
    root: HTMLElement,
    /** After each check that ran (the history panel verifies again: it may be older than this). */
    private readonly checked: (verdict: AccountVerdict) => void = () => {},
  ) {
    super(root, { html: PANEL, button: 'verify-account', summary: 'account-verify-summary', global: '__accountVerification', failed: 'the account check could not run' });
  }

  protected async check(): Promise<void> {
    const first = this.root.querySelector<HTMLElement>('#account-verify-first')!;
    this.status('dim', 'verifying your history and replaying it…');
    first.hidden = true;
    const started = performance.now();
    const v = (this.verdict = await this.client.verifyAccount(this.party, { concurrency: 6 }));
    const ms = Math.round(performance.now() - started);
    const words = v.first ? inWords(v.first) : null;
    this.metrics.last = { status: v.status, events: v.events, legs: v.legs, first: words, ms, pendingAfterSeq: v.pendingAfterSeq, pendingCount: v.pendingCount };
    const counts = `${v.events} committed events replayed (${v.legs} fill leg${v.legs === 1 ? '' : 's'}), ${v.deposits.credited} of ${v.deposits.receipts} deposit${v.deposits.receipts === 1 ? '' : 's'} credited, ${v.withdrawals.debited} of ${v.withdrawals.approved} withdrawal${v.withdrawals.approved === 1 ? '' : 's'} debited, in ${ms} ms`;
    const tail = v.pending.map((x) => x.message).join('; ');
    if (v.status === 'failed') this.status('bad', `${v.problems.length} discrepanc${v.problems.length === 1 ? 'y' : 'ies'} found: ${counts}`);
    else if (v.status === 'pending') this.status('dim', `Nothing differs so far; some of it is not committed yet (${tail}): ${counts}`);
    else if (v.pendingAfterSeq !== null) {
      // Verified as far as the chain has committed; the newer part is said apart, not as a doubt (ADR 0182).
      this.status('good', `Verified up to seq ${v.pendingAfterSeq}; ${v.pendingCount} change${v.pendingCount === 1 ? '' : 's'} after it not committed yet (${tail}): ${counts}`);
    } else this.status('good', `Your account follows from the chain: ${counts}`);
    if (words) {
      first.textContent = words;
      first.hidden = false;
    }
    this.checked(v);
  }

  protected render(): void {
    const v = this.verdict;
    if (!v) return;
    // A number the screen shows from after the last commitment is pending; when the gateway's
    // record at that commitment was verified, the row says so (ADR 0153).
    const cell = (c: CheckedValue) =>
      c.latest && c.status === 'verified'
        ? `<td>${money(c.latest.shown)}</td><td>${money(c.recomputed)}</td><td class="${CLASS.pending}" data-state="pending">${LABEL.pending}, verified at your last commitment (seq ${v.committedSeq}): ${money(c.shown)}</td>`
        : `<td>${money(c.shown)}</td><td>${money(c.recomputed)}</td><td class="${CLASS[c.status]}" data-state="${c.status}">${LABEL[c.status]}</td>`;
    const rows = [`<tr data-testid="account-check" data-field="collateral"><td>Collateral</td>${cell(v.collateral)}</tr>`];
    for (const p of v.positions) {
      for (const [field, label] of [['size', 'size'], ['entryPrice', 'entry price'], ['realizedPnl', 'realized PnL']] as const) {
        rows.push(`<tr data-testid="account-check" data-field="${escapeHtml(`${p.market} ${field}`)}"><td>${escapeHtml(p.market)} ${label}</td>${cell(p[field])}</tr>`);
      }
    }
    this.root.querySelector('#account-verify')!.innerHTML = `<tr><th></th><th>On screen</th><th>Recomputed</th><th>State</th></tr>${rows.join('')}`;
  }
}
