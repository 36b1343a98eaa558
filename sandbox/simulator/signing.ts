// Client-side signing exactly as docs/engine.md "Signing" describes it, with node:crypto ed25519:
// the party key signs the session authorization, the session key signs each request.
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

export interface KeyPair {
  /** Raw 32-byte public key, 64 lowercase hex characters. */
  publicKeyHex: string;
  privateKey: KeyObject;
}

/** PKCS#8 DER prefix of an ed25519 private key; followed by the 32-byte seed. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

function fromPrivate(privateKey: KeyObject, publicKey: KeyObject): KeyPair {
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { publicKeyHex: der.subarray(der.length - 32).toString('hex'), privateKey };
}

export function generateKeyPair(): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return fromPrivate(privateKey, publicKey);
}

/** A key pair from a 32-byte seed: the same seed always gives the same party (reproducible runs). */
export function keyPairFromSeed(seed: Buffer): KeyPair {
  if (seed.length !== 32) throw new RangeError('an ed25519 seed is 32 bytes');
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const jwk = privateKey.export({ format: 'jwk' }) as { x: string };
  return { publicKeyHex: Buffer.from(jwk.x, 'base64url').toString('hex'), privateKey };
}

export function signHex(key: KeyObject, message: string): string {
  return sign(null, Buffer.from(message, 'utf8'), key).toString('hex');
}

/** `<hint>::<public key hex>`; hint must match [a-z0-9][a-z0-9_-]{0,47}. */
export function partyId(hint: string, key: KeyPair): string {
  if (!/^[a-z0-9][a-z0-9_-]{0,47}$/.test(hint)) throw new Error(`bad party hint ${JSON.stringify(hint)}`);
  return `${hint}::${key.publicKeyHex}`;
}

export function sessionAuthMessage(party: string, sessionPublicKey: string, expiresAtMs: number): string {
  return `session-auth\n${party}\n${sessionPublicKey}\n${expiresAtMs}`;
}

/** Body of POST /v1/session-auth. */
export function sessionAuthBody(party: string, partyKey: KeyPair, session: KeyPair, expiresAtMs: number): string {
  const signature = signHex(partyKey.privateKey, sessionAuthMessage(party, session.publicKeyHex, expiresAtMs));
  return JSON.stringify({ party, sessionPublicKey: session.publicKeyHex, expiresAt: expiresAtMs, signature });
}

/** The three signed-request headers over `<METHOD>\n<PATH>\n<tsMs>\n<BODY>`. */
export function signedHeaders(
  o: { party: string; sessionId: string; sessionKey: KeyPair },
  method: string,
  pathWithQuery: string,
  tsMs: number,
  body: string,
): Record<string, string> {
  const sig = signHex(o.sessionKey.privateKey, `${method.toUpperCase()}\n${pathWithQuery}\n${tsMs}\n${body}`);
  return { 'x-user': o.party, 'x-session-id': o.sessionId, 'x-session-sig': `${tsMs}.${sig}` };
}
