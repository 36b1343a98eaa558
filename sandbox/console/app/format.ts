// Display helpers of the console, all over the client's one exact formatter (docs/client.md
// "Numbers on screen"): prices and sizes by their market's rules, money to cents, no float in any
// figure a person reads. The markets' rules are registered once loaded (setMarkets).
import { formatDecimal, formatMoney, formatPercent, formatPrice, formatSize, type Market } from '@gateway/client';

const rules = new Map<string, Market>();

export function setMarkets(markets: readonly Market[]): void {
  for (const m of markets) rules.set(m.symbol, m);
}

/** A price of `market` (decimals by its rules at the magnitude of `reference`, default the value). */
export function px(market: string | null | undefined, value: string | null | undefined, reference?: string | null): string {
  const m = market ? rules.get(market) : undefined;
  return m ? formatPrice(m, value, { reference: reference ?? null }) : formatDecimal(value);
}

/** A size of `market` (at most its size decimals). */
export function sz(market: string | null | undefined, value: string | null | undefined): string {
  const m = market ? rules.get(market) : undefined;
  return m ? formatSize(m, value) : formatDecimal(value);
}

/** Collateral, PnL, fees: cents (`signed`: a + before a gain). */
export const money = (value: string | null | undefined, signed = false): string => formatMoney(value, { sign: signed });

/** A decimal of percent ("1.2345") as "+1.23%". */
export const pct = (value: string | null | undefined): string => formatPercent(value);

/** Any other decimal, exact, trailing zeros dropped (the account check's figures must show every digit). */
export const trim = (value: string | null | undefined): string => formatDecimal(value, 10);

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function shortParty(party: string): string {
  const [hint, key] = party.split('::');
  return `${hint}::${(key ?? '').slice(0, 8)}…`;
}
