// "My fills, verified": each of the party's fills with the state of the user batch that holds it,
// checked in this browser against the chain (docs/verification.md), and "Verify my history", which
// walks every user batch of the party with a progress bar and a summary. Nothing the gateway says
// about a batch is taken: the verdicts are the client's own (verifyHistory, WebCrypto SHA-256).
// It runs when the console opens a party, again when the socket announces a new user batch of the
// party (engine.user_batch_committed) and after each "Verify my account", so its summary never
// stays on what the page saw at load ("no user batch on chain yet").
import type { BatchVerdict, Fill, GatewayClient, HistoryVerdict } from '@gateway/client';
import { escapeHtml, px, sz } from './format.js';
import { VerifyPanel, type PanelMetrics } from './verify-panel.js';

/** The last run, as the browser test and the benchmark read it. */
interface HistoryRun {
  status: string;
  batches: number;
  events: number;
  verified: number;
  pending: number;
  failed: number;
  ms: number;
}
/** Read by the browser test and the benchmark. */
export type VerificationMetrics = PanelMetrics<HistoryRun>;

type FillState = { kind: 'verified'; txId: string | null; userSeq: number } | { kind: 'pending' } | { kind: 'mismatch'; userSeq: number; step: string };

const PANEL = `
  <h2>My fills, verified against the chain</h2>
  <div class="verify-bar">
    <button id="verify-history" type="button">Verify my history</button>
    <progress id="verify-progress" max="1" value="0" hidden></progress>
    <span id="verify-summary" class="dim" role="status"></span>
  </div>
  <table id="my-fills"></table>`;

/** A user batch announced on the socket may not be in the gateway's mirror yet: read again this often, this many times. */
const LISTED_RETRY_MS = 1_000;
const LISTED_RETRIES = 10;

export class VerificationPanel extends VerifyPanel<HistoryRun> {
  private verdict: HistoryVerdict | null = null;
  private fills: Fill[] = [];
  private shown: string;
  /** The newest user batch of the party the socket announced (0: none); runs go on until the history listed reaches it. */
  private wanted = 0;
  private retries = 0;
  private retry: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly client: GatewayClient,
    party: string,
    root: HTMLElement,
  ) {
    super(root, { html: PANEL, button: 'verify-history', summary: 'verify-summary', global: '__verification', failed: 'verification could not run' });
    this.shown = party;
  }

  /** The party shown (the console's party switcher changes it; what was announced for the other one is dropped). */
  get party(): string {
    return this.shown;
  }
  set party(party: string) {
    this.shown = party;
    this.wanted = 0;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
  }

  /**
   * The socket said the party's user batch `userSeq` was committed: verified again, and again
   * (bounded) while the gateway does not list it yet (its mirror follows the engine by a moment).
   */
  committed(userSeq: number): void {
    if (userSeq <= this.wanted) return;
    this.wanted = userSeq;
    this.retries = 0;
    void this.run();
  }

  /** Loads the party's latest fills and verifies the history they belong to. */
  protected async check(): Promise<void> {
    // This run reads what a retry would: at most one retry is ever waiting.
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const bar = this.root.querySelector<HTMLProgressElement>('#verify-progress')!;
    bar.hidden = false;
    bar.value = 0;
    this.status('dim', 'verifying…');
    const started = performance.now();
    const party = this.shown;
    this.fills = (await this.client.listUserFills(party, { limit: 50 })).items;
    const v = (this.verdict = await this.client.verifyHistory(party, {
      concurrency: 6,
      onProgress: (p) => {
        bar.max = Math.max(1, p.total);
        bar.value = p.done;
        this.status('dim', `${p.done} / ${p.total} user batches`);
      },
    }));
    const ms = Math.round(performance.now() - started);
    this.metrics.last = { status: v.status, batches: v.batches, events: v.events, verified: v.verified, pending: v.pending, failed: v.failed, ms };
    this.status(
      v.status === 'failed' ? 'bad' : v.status === 'empty' ? 'dim' : 'good',
      v.status === 'empty'
        ? 'no user batch on chain yet'
        : `${v.verified} of ${v.batches} user batches verified (${v.events} events)` +
            (v.failed > 0 ? `, ${v.failed} MISMATCH` : '') +
            (v.chainBreaks.length > 0 ? `, chain broken at ${v.chainBreaks.map((b) => b.userSeq).join(', ')}` : '') +
            ` in ${ms} ms`,
    );
    if (party === this.shown && v.batches < this.wanted && this.retries < LISTED_RETRIES) {
      this.retries++;
      this.retry = setTimeout(() => void this.run(), LISTED_RETRY_MS);
    }
  }

  private stateOf(fill: Fill): FillState {
    const userSeq = this.verdict?.eventBatches.get(fill.seq);
    if (userSeq === undefined) return { kind: 'pending' };
    const verdict = this.verdict!.verdicts.find((x) => x.userSeq === userSeq) as BatchVerdict | undefined;
    if (!verdict || verdict.status === 'pending') return { kind: 'pending' };
    if (verdict.status === 'failed') return { kind: 'mismatch', userSeq, step: verdict.step };
    return { kind: 'verified', txId: verdict.txId, userSeq };
  }

  protected render(): void {
    const rows = this.fills.map((f) => {
      const s = this.stateOf(f);
      const state =
        s.kind === 'verified'
          ? `<span class="good" title="user batch ${s.userSeq}, chain transaction ${escapeHtml(s.txId ?? '')}">verified</span> <span class="dim" data-testid="fill-tx">tx ${escapeHtml((s.txId ?? '').slice(0, 10))}…</span>`
          : s.kind === 'mismatch'
            ? `<span class="bad" title="user batch ${s.userSeq} failed at ${escapeHtml(s.step)}">mismatch (${escapeHtml(s.step)})</span>`
            : '<span class="dim">pending</span>';
      return `<tr data-testid="my-fill" data-seq="${f.seq}" data-state="${s.kind}"><td>${escapeHtml(f.market)}</td><td class="${f.side}">${escapeHtml(f.side)}</td><td>${px(f.market, f.price)}</td><td>${sz(f.market, f.size)}</td><td>${state}</td></tr>`;
    });
    this.root.querySelector('#my-fills')!.innerHTML = `<tr><th>Market</th><th>Side</th><th>Price</th><th>Size</th><th>State</th></tr>${rows.join('')}`;
  }
}
