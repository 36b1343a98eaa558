// Display helpers: the gateway's decimals are 10-place strings; people read them trimmed.
export function trim(decimal: string | null | undefined): string {
  if (decimal === null || decimal === undefined) return '–';
  return decimal.includes('.') ? decimal.replace(/\.?0+$/, '') : decimal;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function pct(decimal: string | null): string {
  if (decimal === null) return '–';
  const n = Number(decimal);
  return `${n >= 0 ? '+' : ''}${n.toFixed(2)}%`;
}

export function shortParty(party: string): string {
  const [hint, key] = party.split('::');
  return `${hint}::${(key ?? '').slice(0, 8)}…`;
}
