// The faucet button: disabled with the time left while the party's cooldown runs (GET
// /v1/users/:party/faucet), so a click never earns a 429; enabled again when it ends.
import type { GatewayClient } from '@gateway/client';

/** "59 min", "2 min", "45 s": the cooldown left, as a person reads it. */
export function timeLeft(seconds: number): string {
  if (seconds >= 120) return `${Math.ceil(seconds / 60)} min`;
  return `${seconds} s`;
}

export class FaucetButton {
  private timer: ReturnType<typeof setInterval> | null = null;
  party = '';

  constructor(
    private readonly client: GatewayClient,
    private readonly button: HTMLButtonElement,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Reads the party's cooldown and shows it (after a party switch and after each grant). */
  async refresh(): Promise<void> {
    const party = this.party;
    try {
      const status = await this.client.faucetStatus(party);
      if (party === this.party) this.show(status.retryAfterS > 0 ? Date.parse(status.nextAt ?? '') || Date.now() + status.retryAfterS * 1000 : 0);
    } catch (err) {
      this.onError(err);
    }
  }

  private show(until: number): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const paint = (): void => {
      const left = Math.ceil((until - Date.now()) / 1000);
      if (left <= 0) {
        if (this.timer) clearInterval(this.timer);
        this.timer = null;
        this.button.disabled = false;
        this.button.textContent = 'Faucet';
        this.button.title = 'top up this party from the testnet faucet';
        return;
      }
      this.button.disabled = true;
      this.button.textContent = `Faucet in ${timeLeft(left)}`;
      this.button.title = `one top-up per cooldown: the next at ${new Date(until).toLocaleTimeString()}`;
    };
    paint();
    if (until > Date.now()) this.timer = setInterval(paint, 1000);
  }
}
