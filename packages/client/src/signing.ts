// The engine's signing scheme (docs/engine.md "Signing"), shared by REST, the Node-only GET body route and the
// stream's auth query. A party key authorises an ephemeral session key once; the session key then
// signs every request as `<METHOD>\n<PATH+QUERY>\n<tsMs>\n<BODY>`.
import { generateKeyPair, keyPairFromSeed, signHex, type CryptoKey, type Ed25519KeyPair } from './ed25519.js';

export const MAX_SESSION_MS = 24 * 60 * 60 * 1000;

/** Anything that can sign for a party: a local key, a wallet, a hardware signer. */
export interface PartySigner {
  /** `<hint>::<ed25519 public key hex>` */
  party: string;
  /** Signs the UTF-8 message; answers 128 lower-case hex characters. */
  sign(message: string): Promise<string>;
}

/** A party signer from a key held in this process (tests, bots, the demo). */
export async function localParty(hint: string, seedHex?: string): Promise<PartySigner & { keys: Ed25519KeyPair }> {
  if (!/^[a-z0-9][a-z0-9_-]{0,47}$/.test(hint)) throw new TypeError('party hint must match [a-z0-9][a-z0-9_-]{0,47}');
  const keys = seedHex ? await keyPairFromSeed(seedHex) : await generateKeyPair();
  return { party: `${hint}::${keys.publicKeyHex}`, keys, sign: (message) => signHex(keys.privateKey, message) };
}

export function sessionAuthMessage(party: string, sessionPublicKey: string, expiresAtMs: number): string {
  return `session-auth\n${party}\n${sessionPublicKey}\n${expiresAtMs}`;
}

export function requestMessage(method: string, target: string, tsMs: number, body: string): string {
  return `${method.toUpperCase()}\n${target}\n${tsMs}\n${body}`;
}

export interface SignedHeaders {
  'x-user': string;
  'x-session-id': string;
  'x-session-sig': string;
}

/**
 * The last timestamp signed with each session id in this JavaScript realm, shared by every Session
 * object of that id (two clients that restored one stored session, for instance). Ed25519 is
 * deterministic: two identical requests signed with one timestamp are one signature, and the
 * gateway and the engine refuse the second as a replay. The signed bytes cannot carry a nonce (the
 * target and body are the request's own, and the engine's contract fixes them), so timestamps of
 * one session never repeat instead (docs/client.md "Signatures are never repeated").
 */
const lastTsBySession = new Map<string, number>();
/** How far ahead of the clock a burst may push the timestamps before signing waits for the clock. */
export const MAX_TS_LEAD_MS = 1_000;
/** The signature window (±30 s) and a second of slack: timestamps further ahead were all refused. */
const RESTART_BEHIND_MS = 31_000;

/** An authorised session: signs requests with its ephemeral key. */
export class Session {
  constructor(
    readonly party: string,
    readonly sessionId: string,
    readonly expiresAt: number,
    private readonly key: CryptoKey,
    /** Local clock; override to correct a known skew (the engine allows ±30 s). */
    private readonly now: () => number = Date.now,
  ) {}

  /** The session's signing key (non-extractable): for keeping the session across reloads (persist.ts). */
  get privateKey(): CryptoKey {
    return this.key;
  }

  get expired(): boolean {
    return this.now() >= this.expiresAt;
  }

  /**
   * A timestamp never used before by this session id in this realm: the clock, or one past the
   * last one when the clock has not moved. More than 1 000 signatures a second would push it ever
   * further ahead of the clock and out of the ±30 s window, so past MAX_TS_LEAD_MS ahead it waits
   * for the clock (at most 1 000 signed requests a second per session, sustained). A clock that
   * moved back by more than the window (a skew learnt from the gateway's 401) restarts from the
   * clock: every timestamp signed before was that far ahead of the gateway's time, so refused, and
   * none can be repeated as a replay. A smaller step back waits, once, for the clock to pass it.
   */
  async nextTs(): Promise<number> {
    for (;;) {
      const now = this.now();
      const last = lastTsBySession.get(this.sessionId) ?? 0;
      const ts = now > last || last - now > RESTART_BEHIND_MS ? now : last + 1;
      if (ts - now <= MAX_TS_LEAD_MS) {
        lastTsBySession.set(this.sessionId, ts);
        return ts;
      }
      await new Promise((resolve) => setTimeout(resolve, ts - now - MAX_TS_LEAD_MS));
    }
  }

  async signature(message: string): Promise<string> {
    return signHex(this.key, message);
  }

  async headers(method: string, target: string, body: string): Promise<SignedHeaders> {
    const ts = await this.nextTs();
    const sig = await signHex(this.key, requestMessage(method, target, ts, body));
    return { 'x-user': this.party, 'x-session-id': this.sessionId, 'x-session-sig': `${ts}.${sig}` };
  }

  /** The stream's auth query (docs/stream.md: browsers cannot set WebSocket headers). */
  async streamAuth(path = '/v1/stream'): Promise<{ user: string; sessionId: string; sig: string }> {
    const ts = await this.nextTs();
    const sig = await signHex(this.key, requestMessage('GET', path, ts, ''));
    return { user: this.party, sessionId: this.sessionId, sig: `${ts}.${sig}` };
  }
}

export interface SessionRequest {
  body: { party: string; sessionPublicKey: string; expiresAt: number; signature: string };
  key: Ed25519KeyPair;
}

/** Generates the session key and has the party sign the session-auth message. */
export async function prepareSession(signer: PartySigner, lifetimeMs: number, now = Date.now()): Promise<SessionRequest> {
  if (!(lifetimeMs > 0 && lifetimeMs <= MAX_SESSION_MS)) throw new RangeError('session lifetime must be 1 ms to 24 h');
  const key = await generateKeyPair();
  const expiresAt = Math.floor(now + lifetimeMs);
  const signature = await signer.sign(sessionAuthMessage(signer.party, key.publicKeyHex, expiresAt));
  return { key, body: { party: signer.party, sessionPublicKey: key.publicKeyHex, expiresAt, signature } };
}
