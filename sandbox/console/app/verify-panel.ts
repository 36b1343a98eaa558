// What the console's verification panels share ("Verify my history", verification.ts; "Verify my
// account", account-verification.ts): a button that runs a check, one run at a time, a status
// line, and the run counters the browser tests and the benchmark read from `window`.
//
// A run asked for while one is running (a refresh from the socket, the other panel's result) is not
// dropped: it runs once more when the current one ends, so the panel ends on what the newest
// request could see.

/** Read by the browser tests and the benchmark (`window[<global>]`). */
export interface PanelMetrics<Last> {
  runs: number;
  running: boolean;
  last: Last | null;
}

export type StatusTone = 'good' | 'bad' | 'dim';

export interface PanelParts {
  /** The panel's HTML, written into its root once. */
  html: string;
  /** The id of its button and of its status line. */
  button: string;
  summary: string;
  /** The `window` property the metrics are published under. */
  global: string;
  /** Said, with the error, when a run throws. */
  failed: string;
}

export abstract class VerifyPanel<Last> {
  readonly metrics: PanelMetrics<Last> = { runs: 0, running: false, last: null };
  private again = false;

  constructor(
    protected readonly root: HTMLElement,
    private readonly parts: PanelParts,
  ) {
    root.innerHTML = parts.html;
    this.button.addEventListener('click', () => void this.run());
    (window as unknown as Record<string, PanelMetrics<Last>>)[parts.global] = this.metrics;
  }

  /** Runs the check (once more after the current run, when one is running). */
  async run(): Promise<void> {
    if (this.metrics.running) {
      this.again = true;
      return;
    }
    this.metrics.running = true;
    this.button.disabled = true;
    try {
      await this.check();
    } catch (err) {
      this.status('bad', `${this.parts.failed}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.metrics.runs++;
      this.metrics.running = false;
      this.button.disabled = false;
      this.render();
    }
    if (this.again) {
      this.again = false;
      await this.run();
    }
  }

  /** The check itself: fetches, verifies, sets `metrics.last` and the status line. */
  protected abstract check(): Promise<void>;

  /** Draws the panel's table from the last result (after every run, failed or not). */
  protected abstract render(): void;

  protected status(tone: StatusTone, text: string): void {
    const summary = this.root.querySelector<HTMLElement>(`#${this.parts.summary}`)!;
    summary.className = tone;
    summary.textContent = text;
  }

  private get button(): HTMLButtonElement {
    return this.root.querySelector<HTMLButtonElement>(`#${this.parts.button}`)!;
  }
}
