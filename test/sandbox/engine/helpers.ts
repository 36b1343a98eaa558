/**
 * Test helpers for the reference engine: party key pairs, session authorization and signed
 * requests (docs/engine.md "Signing"), admin calls. Reusable by any suite that talks to an engine.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { request } from 'undici';

export interface KeyPair {
  publicKeyHex: string;
  privateKey: KeyObject;
}

export function generateKeyPair(): KeyPair {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { publicKeyHex: der.subarray(der.length - 32).toString('hex'), privateKey };
}

export function signHex(privateKey: KeyObject, message: string | Buffer): string {
  return sign(null, typeof message === 'string' ? Buffer.from(message, 'utf8') : message, privateKey).toString('hex');
}

export interface Party {
  id: string;
  keys: KeyPair;
}

let hintCounter = 0;
export function makeParty(hint = 'p'): Party {
  const keys = generateKeyPair();
  return { id: `${hint}${++hintCounter}::${keys.publicKeyHex}`, keys };
}

export interface HttpResult<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: T;
}

export async function http<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  opts: { body?: string | undefined; headers?: Record<string, string> | string[] } = {},
): Promise<HttpResult<T>> {
  const res = await request(baseUrl + path, {
    method: method as 'GET',
    body: opts.body,
    headers: opts.headers ?? (opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
  });
  const text = await res.body.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, body };
}

export interface SignOptions {
  /** Override the signature timestamp (ms). */
  ts?: number;
  /** Override the X-User header value. */
  user?: string;
  /** Override the session id header. */
  sessionId?: string;
  /** Sign a different body than the one sent (tampering tests). */
  signedBody?: string;
  /** Sign with another key. */
  key?: KeyObject;
}

/** A party with a session, able to send signed requests. */
export class SigningClient {
  sessionId = '';
  session: KeyPair = generateKeyPair();
  private lastTs = 0;

  constructor(
    readonly baseUrl: string,
    readonly party: Party = makeParty(),
  ) {}

  get id(): string {
    return this.party.id;
  }

  static sessionAuthBody(party: Party, session: KeyPair, expiresAt: number, key: KeyObject = party.keys.privateKey): string {
    const signature = signHex(key, `session-auth\n${party.id}\n${session.publicKeyHex}\n${expiresAt}`);
    return JSON.stringify({ party: party.id, sessionPublicKey: session.publicKeyHex, expiresAt, signature });
  }

  /** POST /v1/session-auth; stores the session id. */
  async authorize(lifetimeMs = 60 * 60 * 1000): Promise<HttpResult> {
    this.session = generateKeyPair();
    const r = await http(this.baseUrl, 'POST', '/v1/session-auth', {
      body: SigningClient.sessionAuthBody(this.party, this.session, Date.now() + lifetimeMs),
    });
    if (r.body?.ok) this.sessionId = r.body.sessionId;
    return r;
  }

  /** A fresh, strictly increasing timestamp (replay protection needs unique signatures). */
  nextTs(): number {
    const now = Date.now();
    this.lastTs = now > this.lastTs ? now : this.lastTs + 1;
    return this.lastTs;
  }

  signHeaders(method: string, pathWithQuery: string, body: string, o: SignOptions = {}): Record<string, string> {
    const ts = o.ts ?? this.nextTs();
    const msg = `${method.toUpperCase()}\n${pathWithQuery}\n${ts}\n${o.signedBody ?? body}`;
    const sig = signHex(o.key ?? this.session.privateKey, msg);
    const h: Record<string, string> = {
      'x-user': o.user ?? this.party.id,
      'x-session-id': o.sessionId ?? this.sessionId,
      'x-session-sig': `${ts}.${sig}`,
    };
    if (body.length > 0) h['content-type'] = 'application/json';
    return h;
  }

  async signed<T = any>(method: string, path: string, body?: unknown, o: SignOptions = {}): Promise<HttpResult<T>> {
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    return http<T>(this.baseUrl, method, path, { body: text.length > 0 ? text : undefined, headers: this.signHeaders(method, path, text, o) });
  }

  placeOrder(order: Record<string, unknown>): Promise<HttpResult> {
    return this.signed('POST', '/v1/orders', order);
  }

  cancel(orderId: string): Promise<HttpResult> {
    return this.signed('DELETE', `/v1/orders/${orderId}`);
  }

  tpsl(body: Record<string, unknown>): Promise<HttpResult> {
    return this.signed('POST', '/v1/tpsl', body);
  }

  me(): Promise<HttpResult> {
    return this.signed('GET', '/v1/user/me', { party: this.party.id });
  }

  withdraw(amount: string): Promise<HttpResult> {
    return this.signed('POST', '/v1/withdrawals', { amount });
  }
}

export function adminHeaders(token: string, json = false): Record<string, string> {
  const h: Record<string, string> = { authorization: `Bearer ${token}` };
  if (json) h['content-type'] = 'application/json';
  return h;
}

export async function faucet(baseUrl: string, token: string, party: string, amount: string): Promise<HttpResult> {
  return http(baseUrl, 'POST', '/v1/admin/faucet', { body: JSON.stringify({ party, amount }), headers: adminHeaders(token, true) });
}

/**
 * A party with a session and collateral, ready to trade. It signs against `baseUrl` (the engine, or
 * a gateway in front of it); the collateral comes from the engine's faucet at `engineUrl`.
 */
export async function fundedClient(baseUrl: string, token: string, amount = '100000', hint = 'p', engineUrl = baseUrl): Promise<SigningClient> {
  const c = new SigningClient(baseUrl, makeParty(hint));
  const r = await c.authorize();
  if (!r.body?.ok) throw new Error(`session-auth failed: ${r.text}`);
  const f = await faucet(engineUrl, token, c.id, amount);
  if (!f.body?.ok) throw new Error(`faucet failed: ${f.text}`);
  return c;
}
