// Ed25519 through WebCrypto (`crypto.subtle`, algorithm name "Ed25519"): built into every current
// browser and into Node 20, so the package needs no crypto dependency and no `node:` import.
// Private keys stay non-extractable CryptoKeys once imported.
import { base64UrlToBytes, fromHex, toHex } from './hex.js';

const ED25519 = { name: 'Ed25519' } as const;
/** PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410): fixed 16-byte prefix + seed. */
const PKCS8_PREFIX = fromHex('302e020100300506032b657004220420');

// Key types taken from the global WebCrypto, so this file compiles against the DOM library and
// against Node's typings alike.
type Subtle = typeof globalThis.crypto.subtle;
export type CryptoKey = Awaited<ReturnType<Subtle['importKey']>>;

export interface Ed25519KeyPair {
  privateKey: CryptoKey;
  /** 64 lower-case hex characters. */
  publicKeyHex: string;
}

function subtle(): Subtle {
  const c = globalThis.crypto;
  if (!c?.subtle) throw new Error('WebCrypto (crypto.subtle) is not available: use a secure context (https) or Node 20+');
  return c.subtle;
}

/**
 * A fresh key pair. The private key is non-extractable unless asked otherwise: script on the page
 * can use it to sign but never read it (it can still be kept across reloads in IndexedDB, which
 * stores CryptoKeys as they are; see persist.ts). The public key is always exportable.
 */
export async function generateKeyPair(options: { extractable?: boolean } = {}): Promise<Ed25519KeyPair> {
  const pair = (await subtle().generateKey(ED25519, options.extractable ?? false, ['sign', 'verify'])) as { privateKey: CryptoKey; publicKey: CryptoKey };
  const raw = await subtle().exportKey('raw', pair.publicKey);
  return { privateKey: pair.privateKey, publicKeyHex: toHex(raw) };
}

/** Imports a 32-byte seed (64 hex) and derives its public key. */
export async function keyPairFromSeed(seedHex: string): Promise<Ed25519KeyPair> {
  const seed = fromHex(seedHex);
  if (seed.length !== 32) throw new TypeError('an Ed25519 seed is 32 bytes (64 hex characters)');
  const pkcs8 = new Uint8Array(PKCS8_PREFIX.length + 32);
  pkcs8.set(PKCS8_PREFIX);
  pkcs8.set(seed, PKCS8_PREFIX.length);
  // Imported extractable once, only to read the public key (`x` of the JWK); the key used for
  // signing is imported again as non-extractable.
  const extractable = await subtle().importKey('pkcs8', pkcs8, ED25519, true, ['sign']);
  const jwk = await subtle().exportKey('jwk', extractable);
  if (!jwk.x) throw new Error('this WebCrypto does not export the Ed25519 public key');
  const privateKey = await subtle().importKey('pkcs8', pkcs8, ED25519, false, ['sign']);
  return { privateKey, publicKeyHex: toHex(base64UrlToBytes(jwk.x)) };
}

const encoder = new TextEncoder();

/** Signs UTF-8 text or bytes; answers the 128-hex signature. */
export async function signHex(privateKey: CryptoKey, message: string | Uint8Array): Promise<string> {
  // WebCrypto's DOM typing takes only ArrayBuffer-backed views (not SharedArrayBuffer ones):
  // the bytes are copied into a fresh ArrayBuffer (messages are a few hundred bytes).
  const data = new Uint8Array(typeof message === 'string' ? encoder.encode(message) : message);
  return toHex(await subtle().sign(ED25519, privateKey, data));
}
