// "My fills, verified": each of the party's fills with the state of the user batch that holds it,
// checked in this browser against the chain (docs/verification.md), and "Verify my history", which
// walks every user batch of the party with a progress bar and a summary. Nothing the gateway says
// about a batch is taken: the verdicts are the client's own (verifyHistory, WebCrypto SHA-256).
import type { BatchVerdict, Fill, GatewayClient, HistoryVerdict } from '@gateway/client';
import { escapeHtml, px, sz } from './format.js';

/** Read by the browser test and the benchmark. */
export interface VerificationMetrics {
  runs: number;
  running: boolean;
  last: { status: string; batches: number; events: number; verified: number; pending: number; failed: number; ms: number } | null;
}

type FillState = { kind: 'verified'; txId: string | null; userSeq: number } | { kind: 'pending' } | { kind: 'mismatch'; userSeq: number; step: string };

const PANEL = `
  <h2>My fills, verified against the chain</h2>
  <div class="verify-bar">
    <button id="verify-history" type="button">Verify my history</button>
    <progress id="verify-progress" max="1" value="0" hidden></progress>
    <span id="verify-summary" class="dim" role="status"></span>
  </div>
  <table id="my-fills"></table>`;

export class VerificationPanel {
  readonly metrics: VerificationMetrics = { runs: 0, running: false, last: null };
  private verdict: HistoryVerdict | null = null;
  private fills: Fill[] = [];

  constructor(
    private readonly client: GatewayClient,
    /** The party shown (the console's party switcher changes it). */
    public party: string,
    private readonly root: HTMLElement,
  ) {
    root.innerHTML = PANEL;
    this.button.addEventListener('click', () => void this.run());
    (window as unknown as { __verification: VerificationMetrics }).__verification = this.metrics;
  }

  private get button(): HTMLButtonElement {
    return this.root.querySelector<HTMLButtonElement>('#verify-history')!;
  }

  /** Loads the party's latest fills and verifies the history they belong to. */
  async run(): Promise<void> {
    if (this.metrics.running) return;
    this.metrics.running = true;
    this.button.disabled = true;
    const bar = this.root.querySelector<HTMLProgressElement>('#verify-progress')!;
    const summary = this.root.querySelector<HTMLElement>('#verify-summary')!;
    bar.hidden = false;
    bar.value = 0;
    summary.className = 'dim';
    summary.textContent = 'verifying…';
    const started = performance.now();
    try {
      this.fills = (await this.client.listUserFills(this.party, { limit: 50 })).items;
      this.verdict = await this.client.verifyHistory(this.party, {
        concurrency: 6,
        onProgress: (p) => {
          bar.max = Math.max(1, p.total);
          bar.value = p.done;
          summary.textContent = `${p.done} / ${p.total} user batches`;
        },
      });
      const v = this.verdict;
      const ms = Math.round(performance.now() - started);
      this.metrics.last = { status: v.status, batches: v.batches, events: v.events, verified: v.verified, pending: v.pending, failed: v.failed, ms };
      summary.className = v.status === 'failed' ? 'bad' : v.status === 'empty' ? 'dim' : 'good';
      summary.textContent =
        v.status === 'empty'
          ? 'no user batch on chain yet'
          : `${v.verified} of ${v.batches} user batches verified (${v.events} events)` +
            (v.failed > 0 ? `, ${v.failed} MISMATCH` : '') +
            (v.chainBreaks.length > 0 ? `, chain broken at ${v.chainBreaks.map((b) => b.userSeq).join(', ')}` : '') +
            ` in ${ms} ms`;
    } catch (err) {
      summary.className = 'bad';
      summary.textContent = `verification could not run: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      this.metrics.runs++;
      this.metrics.running = false;
      this.button.disabled = false;
      this.render();
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

  render(): void {
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
