import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { importPublicKey, parseSessionSig, partyPublicKeyHex, signedPayload, verifySignature } from '../../../src/auth/signature.js';

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { hex: der.subarray(der.length - 32).toString('hex'), privateKey };
}

describe('signature scheme (docs/engine.md "Signing")', () => {
  it('builds METHOD\\nPATH\\ntsMs\\nBODY with an upper-case method and the raw body bytes', () => {
    expect(signedPayload('post', '/v1/orders?a=1', 1700000000123, '{"x":1}').toString('utf8')).toBe('POST\n/v1/orders?a=1\n1700000000123\n{"x":1}');
    expect(signedPayload('GET', '/v1/stream', 5, '').toString('utf8')).toBe('GET\n/v1/stream\n5\n');
    const bytes = Buffer.from([0xff, 0x00, 0x7b]);
    expect(signedPayload('POST', '/p', 1, bytes).subarray(-3)).toEqual(bytes);
  });

  it('parses <tsMs>.<128 hex> and refuses anything else', () => {
    const sig = 'ab'.repeat(64);
    expect(parseSessionSig(`1700000000123.${sig}`)).toEqual({ tsMs: 1700000000123, signature: Buffer.from(sig, 'hex') });
    for (const bad of ['', '1.', `.${sig}`, `1.${sig}0`, `1.${sig.toUpperCase()}`, `1x.${sig}`, `12345678901234567.${sig}`, ` 1.${sig}`]) {
      expect(parseSessionSig(bad)).toBeNull();
    }
  });

  it('verifies a real ed25519 signature and rejects a flipped bit or another key', () => {
    const k = keyPair();
    const payload = signedPayload('GET', '/v1/users/a/fills', 42, '');
    const signature = sign(null, payload, k.privateKey);
    const key = importPublicKey(k.hex)!;
    expect(verifySignature(key, payload, signature)).toBe(true);
    const flipped = Buffer.from(signature);
    flipped[0] = flipped[0]! ^ 1;
    expect(verifySignature(key, payload, flipped)).toBe(false);
    expect(verifySignature(importPublicKey(keyPair().hex)!, payload, signature)).toBe(false);
    expect(verifySignature(key, payload, Buffer.alloc(10))).toBe(false);
  });

  it('imports only 64 lower-case hex keys', () => {
    expect(importPublicKey('A'.repeat(64))).toBeNull();
    expect(importPublicKey('a'.repeat(63))).toBeNull();
    expect(importPublicKey(keyPair().hex)).not.toBeNull();
  });

  it('reads the public key embedded in a party id', () => {
    expect(partyPublicKeyHex(`alice::${'c'.repeat(64)}`)).toBe('c'.repeat(64));
    expect(partyPublicKeyHex('alice')).toBeNull();
    expect(partyPublicKeyHex(`alice::${'c'.repeat(63)}`)).toBeNull();
  });
});
