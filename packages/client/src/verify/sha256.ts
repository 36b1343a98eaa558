// SHA-256 through WebCrypto only (browsers and Node ≥ 20 have `crypto.subtle`): no dependency.
const encoder = new TextEncoder();

type Subtle = typeof globalThis.crypto.subtle;

function subtle(): Subtle {
  const c = globalThis.crypto;
  if (!c?.subtle) throw new Error('WebCrypto (crypto.subtle) is not available: a secure context (https or localhost) is needed');
  return c.subtle;
}

export async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle().digest('SHA-256', data as Uint8Array<ArrayBuffer>));
}

/** sha256(0x00 ‖ utf8(text)): the leaf of an event's canonical JSON. */
export function leafOfText(text: string): Promise<Uint8Array> {
  const body = encoder.encode(text);
  const input = new Uint8Array(body.length + 1);
  input.set(body, 1);
  return sha256(input);
}

/** sha256(0x00 ‖ 32 raw bytes): the leaf of a user root in its manifest. */
export function leafOfRoot(root: Uint8Array): Promise<Uint8Array> {
  const input = new Uint8Array(33);
  input.set(root, 1);
  return sha256(input);
}

/** sha256(0x01 ‖ left ‖ right). */
export function nodeOf(left: Uint8Array, right: Uint8Array): Promise<Uint8Array> {
  const input = new Uint8Array(65);
  input[0] = 1;
  input.set(left, 1);
  input.set(right, 33);
  return sha256(input);
}

/**
 * The leaves of many texts, sha256(0x00 ‖ utf8(text)) each, all digests requested at once. The
 * texts are encoded in one call into one buffer (each preceded by its 0x00) and hashed through
 * views into it, rather than one encoding and two copies per text: with a hundred leaves per batch
 * the per-call costs, not the bytes, are what verification spends its time on.
 */
export function leavesOfTexts(texts: readonly string[]): Promise<ArrayBuffer[]> {
  const joined = `\u0000${texts.join('\u0000')}`;
  if (NON_ASCII.test(joined)) return Promise.all(texts.map((t) => leafOfText(t).then((h) => h.buffer as ArrayBuffer)));
  // ASCII only (the usual case): one byte per character, so the offsets are the strings' lengths.
  const bytes = encoder.encode(joined);
  const s = subtle();
  const out: Array<Promise<ArrayBuffer>> = new Array(texts.length);
  let at = 0;
  for (let i = 0; i < texts.length; i++) {
    const end = at + 1 + texts[i]!.length;
    out[i] = s.digest('SHA-256', bytes.subarray(at, end));
    at = end;
  }
  return Promise.all(out);
}

/** Any UTF-16 code unit above 0x7f (surrogates included): the text is not one byte per character. */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * One level of a tree: sha256(0x01 ‖ left ‖ right) of each neighbouring pair, the unpaired last
 * node moved up unchanged. The pairs' inputs are written into one buffer and hashed through views.
 */
export async function levelUp(level: readonly ArrayBuffer[]): Promise<ArrayBuffer[]> {
  const pairs = level.length >> 1;
  const input = new Uint8Array(pairs * 65);
  const s = subtle();
  const up: Array<Promise<ArrayBuffer> | ArrayBuffer> = new Array(pairs + (level.length & 1));
  for (let j = 0; j < pairs; j++) {
    const at = j * 65;
    input[at] = 1;
    input.set(new Uint8Array(level[2 * j]!), at + 1);
    input.set(new Uint8Array(level[2 * j + 1]!), at + 33);
    up[j] = s.digest('SHA-256', input.subarray(at, at + 65));
  }
  if (level.length & 1) up[pairs] = level[level.length - 1]!;
  return Promise.all(up);
}

const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX_BYTE[bytes[i]!]!;
  return out;
}

export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
