// The AsyncAPI document describes every message in both directions: each frame kind and control
// or answer message the server can send (as the schemas know them, and as the source makes them:
// every 'stream.*' kind written anywhere in the stream code), and each op a client may send, with
// the schema the gateway checks it against.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildAsyncApi } from '../../../src/stream/asyncapi.js';
import { FRAME_KINDS, PASSTHROUGH_KINDS } from '../../../src/contracts/frame.js';
import { FRAME_KIND_DECLARATIONS } from '../../../src/stream/frame-kinds.js';
import { CLIENT_CALLS } from '../../../src/http/calls/index.js';

type Doc = {
  info: { description: string };
  components: { messages: Record<string, { name: string; payload: { properties?: Record<string, { const?: string; anyOf?: Array<{ const?: string }> }> } }> };
  operations: Record<string, { action: string; messages: Array<{ $ref: string }> }>;
  channels: { stream: { messages: Record<string, { $ref: string }> } };
};

const doc = buildAsyncApi(CLIENT_CALLS) as unknown as Doc;
/** Every op a client may send: those of the calls that have one. */
const CLIENT_OPS = CLIENT_CALLS.flatMap((c) => (c.op === null ? [] : [c.op]));

/** The message ids an operation lists, resolved to their documented messages. */
function messagesOf(action: 'send' | 'receive') {
  const op = Object.values(doc.operations).find((o) => o.action === action)!;
  return op.messages.map((r) => {
    const id = r.$ref.split('/').at(-1)!;
    expect(doc.channels.stream.messages[id], id).toBeDefined();
    return doc.components.messages[id]!;
  });
}

/** The literal values a message schema's `kind` / `op` property allows. */
function literals(message: { payload: { properties?: Record<string, { const?: string; anyOf?: Array<{ const?: string }> }> } }, field: string): string[] {
  const p = message.payload.properties?.[field];
  if (!p) return [];
  if (p.const !== undefined) return [p.const];
  return (p.anyOf ?? []).map((a) => a.const).filter((c): c is string => c !== undefined);
}

/** Every 'stream.<word>' literal in the files of the stream code (what the server can send). */
function streamKindsInSource(): string[] {
  const files = [
    ...readdirSync('src/stream').map((f) => join('src/stream', f)),
    'src/http/stream-messages.ts',
    'src/http/stream.ts',
    'src/http/stream-upgrade.ts',
  ].filter((f) => f.endsWith('.ts'));
  const kinds = new Set<string>();
  for (const f of files) for (const m of readFileSync(f, 'utf8').matchAll(/'(stream\.[a-z]+)'/g)) kinds.add(m[1]!);
  return [...kinds];
}

describe('AsyncAPI: every message in both directions', () => {
  it('documents every kind the server sends, frames, control messages and answers', () => {
    const received = messagesOf('receive').flatMap((m) => literals(m, 'kind'));
    const sendable = new Set([...FRAME_KINDS, ...FRAME_KIND_DECLARATIONS.map((d) => d.kind), ...streamKindsInSource()]);
    expect(streamKindsInSource()).toEqual(expect.arrayContaining(['stream.ack', 'stream.answer', 'stream.error', 'stream.subscribed']));
    for (const kind of sendable) expect(received, kind).toContain(kind);
    for (const kind of PASSTHROUGH_KINDS) expect(received).toContain(kind);
  });

  it('documents every op a client may send, with the schema the gateway checks it against', () => {
    const sent = messagesOf('send');
    const ops = sent.flatMap((m) => literals(m, 'op'));
    expect(ops.sort()).toEqual([...CLIENT_OPS].sort());
    for (const op of CLIENT_OPS) {
      const documented = sent.find((m) => literals(m, 'op').includes(op))!;
      expect(documented.payload).toEqual(JSON.parse(JSON.stringify(CLIENT_CALLS.find((c) => c.op === op)!.message)));
    }
  });

  it('says how messages change filters and how orders are verified', () => {
    expect(doc.info.description).toContain('sendStream');
    expect(doc.info.description).toContain('unknown_market');
    expect(doc.info.description).toContain('one replay memory');
  });
});
