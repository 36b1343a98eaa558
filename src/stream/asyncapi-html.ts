// The stream's AsyncAPI document as one readable HTML page (`/docs/stream`), beside the JSON at
// `/docs/asyncapi.json`: the description, the connection's query parameters, then every message
// the gateway sends and every message a client sends, each with its payload's fields (name, type,
// required, description) as nested lists. Rendered once at start from the same document, with no
// script and no outside asset, so it works offline and under any content security policy.

interface Schema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema | Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
}
interface Message {
  name?: string;
  summary?: string;
  description?: string;
  payload?: Schema;
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
/** `code` spans of the document's Markdown-ish text, the rest escaped. */
const text = (s: string): string => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');

function typeOf(s: Schema): string {
  if (s.const !== undefined) return `= ${JSON.stringify(s.const)}`;
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return alts.map(typeOf).join(' | ');
  if (s.type === 'array') {
    const items = Array.isArray(s.items) ? `[${s.items.map(typeOf).join(', ')}]` : s.items ? `${typeOf(s.items)}[]` : 'array';
    return items;
  }
  const t = Array.isArray(s.type) ? s.type.join(' | ') : (s.type ?? 'any');
  const range = s.minimum !== undefined || s.maximum !== undefined ? ` (${s.minimum ?? ''}..${s.maximum ?? ''})` : '';
  return t + range;
}

function fields(s: Schema | undefined, depth = 0): string {
  if (!s) return '';
  const alts = s.anyOf ?? s.oneOf;
  if (alts && alts.some((a) => a.properties)) return alts.map((a, i) => `<div class="alt">variant ${i + 1}${fields(a, depth + 1)}</div>`).join('');
  const target = s.type === 'array' && s.items && !Array.isArray(s.items) ? s.items : s;
  if (!target.properties || depth > 6) return '';
  const required = new Set(target.required ?? []);
  const rows = Object.entries(target.properties).map(([name, p]) => {
    const desc = p.description ? ` — ${text(p.description)}` : '';
    return `<li><code>${esc(name)}</code>${required.has(name) ? '' : '?'} <span class="t">${esc(typeOf(p))}</span>${desc}${fields(p, depth + 1)}</li>`;
  });
  return `<ul>${rows.join('')}</ul>`;
}

function messageSection(id: string, m: Message): string {
  const title = m.name ?? id;
  return `<section id="${esc(id)}"><h3>${esc(title)}</h3>${m.summary ? `<p>${text(m.summary)}</p>` : ''}${m.description ? `<p>${text(m.description)}</p>` : ''}${fields(m.payload)}</section>`;
}

/** The page for one AsyncAPI 3 document (as built by buildAsyncApi). */
export function renderAsyncApiHtml(doc: Record<string, unknown>): string {
  const info = doc.info as { title: string; version: string; description?: string };
  const messages = (doc.components as { messages: Record<string, Message> }).messages;
  const operations = doc.operations as Record<string, { action: string; summary?: string; messages: Array<{ $ref: string }> }>;
  const channel = Object.values(doc.channels as Record<string, { address: string; bindings?: { ws?: { query?: Schema } } }>)[0]!;
  const section = (op: { action: string; summary?: string; messages: Array<{ $ref: string }> }) => {
    const ids = op.messages.map((r) => r.$ref.split('/').pop()!);
    const toc = ids.map((id) => `<a href="#${esc(id)}">${esc(messages[id]?.name ?? id)}</a>`).join(' · ');
    return `<h2>${op.action === 'receive' ? 'The gateway sends' : 'A client sends'}</h2><p>${text(op.summary ?? '')}</p><p class="toc">${toc}</p>${ids.map((id) => messageSection(id, messages[id] ?? {})).join('')}`;
  };
  const description = (info.description ?? '')
    .split(/\n\n+/)
    .map((p) => `<p>${text(p).replace(/\n/g, ' ')}</p>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(info.title)} — stream</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
code{font:13px ui-monospace,monospace;background:#f3f4f6;padding:0 .25em;border-radius:3px}
h3{margin:1.6rem 0 .3rem;font:600 16px ui-monospace,monospace}ul{margin:.2rem 0;padding-left:1.3rem}
.t{color:#6b21a8;font:12px ui-monospace,monospace}.toc a{white-space:nowrap}.alt{margin:.3rem 0 .3rem 1rem;color:#555}
section{border-top:1px solid #e5e7eb}
</style></head><body>
<h1>${esc(info.title)} <small>${esc(info.version)}</small></h1>
<p>The live stream at <code>${esc(channel.address)}</code> (WebSocket). Machine-readable: <a href="/docs/asyncapi.json">/docs/asyncapi.json</a> (AsyncAPI 3). REST: <a href="/docs">/docs</a>.</p>
${description}
<h2>Connection query</h2>${fields(channel.bindings?.ws?.query)}
${Object.values(operations).map(section).join('\n')}
</body></html>`;
}
