// The engine's signed-request scheme (ed25519 over `METHOD\nPATH\ntsMs\nBODY`), verified with
// Node's own crypto. Public keys arrive as 64 hex characters (raw 32 bytes); Node imports ed25519
// keys as SPKI DER, which is a fixed 12-byte prefix followed by the raw key.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const HEX64 = /^[0-9a-f]{64}$/;
// Only the canonical decimal form of the timestamp: no sign, no leading zero, at most 16 digits. The
// signature covers the number, so `0<ts>` would verify too; accepting one spelling per number is what
// lets the replay memory key on what was verified.
const SIG = /^(0|[1-9]\d{0,15})\.([0-9a-f]{128})$/;

export const SIGNATURE_WINDOW_MS = 30_000;

export function importPublicKey(hex: string): KeyObject | null {
  if (!HEX64.test(hex)) return null;
  try {
    return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
  } catch {
    return null;
  }
}

export interface ParsedSig {
  tsMs: number;
  signature: Buffer;
}

/** Parses `X-Session-Sig` = `<tsMs>.<128 hex>`; null when malformed or not canonical. */
export function parseSessionSig(value: string): ParsedSig | null {
  const m = SIG.exec(value);
  if (!m) return null;
  const tsMs = Number(m[1]);
  if (!Number.isSafeInteger(tsMs)) return null;
  return { tsMs, signature: Buffer.from(m[2]!, 'hex') };
}

export function signedPayload(method: string, pathWithQuery: string, tsMs: number, body: string | Buffer): Buffer {
  const head = Buffer.from(`${method.toUpperCase()}\n${pathWithQuery}\n${tsMs}\n`, 'utf8');
  return Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

export function verifySignature(key: KeyObject, payload: Buffer, signature: Buffer): boolean {
  try {
    return verify(null, payload, key, signature);
  } catch {
    return false;
  }
}

/**
 * The same check on libuv's thread pool: for callers that verify many signatures at once (a batch's
 * items) while this thread has other work (forwarding them), so the checks run beside it.
 */
export function verifySignatureOffThread(key: KeyObject, payload: Buffer, signature: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      verify(null, payload, key, signature, (err, ok) => resolve(!err && ok));
    } catch {
      resolve(false);
    }
  });
}

/** The party id embeds its own public key: `<hint>::<key hex>`. */
export function partyPublicKeyHex(party: string): string | null {
  const i = party.lastIndexOf('::');
  if (i < 0) return null;
  const key = party.slice(i + 2);
  return HEX64.test(key) ? key : null;
}
