/**
 * Session authorization and signed-request verification.
 *
 * session-auth: the party key signs `session-auth\n<party>\n<sessionPublicKey>\n<expiresAtMs>`.
 * signed request: the session key signs `<METHOD>\n<PATH+QUERY>\n<tsMs>\n<BODY>`, sent as
 * `X-Session-Sig: <tsMs>.<sigHex>`; accepted within ±30 s, once per (sessionId, tsMs, sig).
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';

export const PARTY_RE = /^[a-z0-9][a-z0-9_-]{0,47}::[0-9a-f]{64}$/;
export const HEX64_RE = /^[0-9a-f]{64}$/;
export const HEX128_RE = /^[0-9a-f]{128}$/;
export const SIG_HEADER_RE = /^(\d{1,16})\.([0-9a-f]{128})$/;
export const MAX_SESSION_LIFETIME_MS = 24 * 60 * 60 * 1000;
export const SIGNATURE_WINDOW_MS = 30_000;

const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function ed25519PublicKey(hex: string): KeyObject {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
}

export function partyPublicKeyHex(party: string): string {
  return party.slice(party.lastIndexOf('::') + 2);
}

export function sessionAuthMessage(party: string, sessionPublicKey: string, expiresAtMs: number): string {
  return `session-auth\n${party}\n${sessionPublicKey}\n${expiresAtMs}`;
}

export function signedRequestMessage(method: string, path: string, tsMs: number | string, body: string | Buffer): Buffer {
  const head = Buffer.from(`${method.toUpperCase()}\n${path}\n${tsMs}\n`, 'utf8');
  return body.length === 0 ? head : Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

export function verifyEd25519(key: KeyObject, message: Buffer | string, sigHex: string): boolean {
  try {
    return verify(null, typeof message === 'string' ? Buffer.from(message, 'utf8') : message, key, Buffer.from(sigHex, 'hex'));
  } catch {
    return false;
  }
}

export interface Session {
  sessionId: string;
  party: string;
  publicKey: string;
  key: KeyObject;
  expiresAt: number;
}

export type AuthFailure = { status: 401; error: string } | { status: 200; code: 'session_expired'; error: string };
export type AuthResult = { ok: true; session: Session } | { ok: false; failure: AuthFailure };

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  /** `${sessionId} ${tsMs} ${sig}` → tsMs, pruned once outside the window. */
  private readonly seen = new Map<string, number>();
  private readonly partyKeys = new Map<string, KeyObject>();

  constructor(private readonly clock: () => number = Date.now) {}

  get(sessionId: string): Session | undefined {
    return this.sessions.get(sessionId);
  }

  partyKey(party: string): KeyObject {
    let k = this.partyKeys.get(party);
    if (!k) {
      k = ed25519PublicKey(partyPublicKeyHex(party));
      if (this.partyKeys.size > 100_000) this.partyKeys.clear();
      this.partyKeys.set(party, k);
    }
    return k;
  }

  create(party: string, publicKey: string, expiresAt: number): Session {
    const session: Session = {
      sessionId: `s-${randomBytes(16).toString('hex')}`,
      party,
      publicKey,
      key: ed25519PublicKey(publicKey),
      expiresAt,
    };
    this.sessions.set(session.sessionId, session);
    return session;
  }

  /**
   * Verify the three signed-request headers. An expired session with a valid signature yields the
   * business rejection `session_expired` (HTTP 200); everything else that fails is a 401.
   * `verifier` runs the ed25519 check (inline, or on worker threads).
   */
  async verifyRequest(
    args: {
      user: string | undefined;
      sessionId: string | undefined;
      sigHeader: string | undefined;
      method: string;
      path: string;
      body: Buffer;
    },
    verifier?: (publicKeyHex: string, message: Buffer, sigHex: string) => Promise<boolean>,
  ): Promise<AuthResult> {
    const fail = (error: string): AuthResult => ({ ok: false, failure: { status: 401, error } });
    const { user, sessionId, sigHeader } = args;
    if (!user || !sessionId || !sigHeader) return fail('missing X-User, X-Session-Id or X-Session-Sig');
    const m = SIG_HEADER_RE.exec(sigHeader);
    if (!m) return fail('malformed X-Session-Sig');
    const session = this.sessions.get(sessionId);
    if (!session) return fail('unknown session');
    if (session.party !== user) return fail('session does not belong to X-User');
    const tsText = m[1]!;
    const sig = m[2]!;
    const ts = Number(tsText);
    if (Math.abs(this.clock() - ts) > SIGNATURE_WINDOW_MS) return fail('signature timestamp outside the ±30 s window');
    const replayKey = `${sessionId} ${tsText} ${sig}`;
    if (this.seen.has(replayKey)) return fail('replayed signature');
    const message = signedRequestMessage(args.method, args.path, tsText, args.body);
    // Reserve the key while the signature is checked so a concurrent duplicate cannot pass too.
    this.seen.set(replayKey, ts);
    let valid: boolean;
    try {
      valid = verifier ? await verifier(session.publicKey, message, sig) : verifyEd25519(session.key, message, sig);
    } catch {
      valid = false;
    }
    if (!valid) {
      this.seen.delete(replayKey);
      return fail('bad signature');
    }
    if (this.clock() >= session.expiresAt) {
      return { ok: false, failure: { status: 200, code: 'session_expired', error: 'session expired' } };
    }
    return { ok: true, session };
  }

  /** Forget replay entries that the time window already rejects. */
  prune(): void {
    const cutoff = this.clock() - SIGNATURE_WINDOW_MS - 1000;
    for (const [k, ts] of this.seen) if (ts < cutoff) this.seen.delete(k);
    const now = this.clock();
    for (const [id, s] of this.sessions) if (s.expiresAt + 60 * 60 * 1000 < now) this.sessions.delete(id);
  }

  get replayCacheSize(): number {
    return this.seen.size;
  }
}
