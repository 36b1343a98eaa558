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

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += bytes[i]!.toString(16).padStart(2, '0');
  return out;
}

export function fromHex(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
