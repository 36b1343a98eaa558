// One trading bot: its own party key, a session, and the signed engine calls a real client makes.
import { Pool } from 'undici';
import { keyPairFromSeed, partyId, sessionAuthBody, signedHeaders, generateKeyPair, type KeyPair } from './signing.js';

export interface EngineAnswer {
  status: number;
  body: Record<string, unknown> | null;
}

export interface PositionView {
  positionId: string;
  market: string;
  size: number;
}

export class Bot {
  readonly party: string;
  private sessionId = '';
  private sessionKey: KeyPair = generateKeyPair();
  private lastTs = 0;
  /** Order ids this bot believes are resting, oldest first. */
  readonly resting: string[] = [];

  constructor(
    private readonly pool: Pool,
    readonly hint: string,
    private readonly key: KeyPair,
  ) {
    this.party = partyId(hint, key);
  }

  static fromSeed(pool: Pool, hint: string, seed: Buffer): Bot {
    return new Bot(pool, hint, keyPairFromSeed(seed));
  }

  async authorize(lifetimeMs = 6 * 60 * 60 * 1000): Promise<void> {
    this.sessionKey = generateKeyPair();
    const r = await call(this.pool, 'POST', '/v1/session-auth', sessionAuthBody(this.party, this.key, this.sessionKey, Date.now() + lifetimeMs), {});
    if (r.body?.ok !== true || typeof r.body.sessionId !== 'string') throw new Error(`session-auth failed for ${this.hint}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    this.sessionId = r.body.sessionId;
  }

  /** Strictly increasing timestamps: the engine refuses a replayed (session, ts, signature). */
  private ts(): number {
    const now = Date.now();
    this.lastTs = now > this.lastTs ? now : this.lastTs + 1;
    return this.lastTs;
  }

  /** A signed call; re-authorizes once when the session is unknown or expired. */
  async signed(method: string, path: string, body?: unknown): Promise<EngineAnswer> {
    const text = body === undefined ? '' : JSON.stringify(body);
    const send = (): Promise<EngineAnswer> => {
      const h = signedHeaders({ party: this.party, sessionId: this.sessionId, sessionKey: this.sessionKey }, method, path, this.ts(), text);
      if (text) h['content-type'] = 'application/json';
      return call(this.pool, method, path, text || undefined, h);
    };
    let r = await send();
    if (r.status === 401 || r.body?.code === 'session_expired') {
      await this.authorize();
      r = await send();
    }
    return r;
  }

  placeOrder(order: Record<string, unknown>): Promise<EngineAnswer> {
    return this.signed('POST', '/v1/orders', order);
  }

  cancel(orderId: string): Promise<EngineAnswer> {
    return this.signed('DELETE', `/v1/orders/${encodeURIComponent(orderId)}`);
  }

  tpsl(body: Record<string, unknown>): Promise<EngineAnswer> {
    return this.signed('POST', '/v1/tpsl', body);
  }

  withdraw(amount: string): Promise<EngineAnswer> {
    return this.signed('POST', '/v1/withdrawals', { amount });
  }

  /** Open positions from GET /v1/user/me (signed JSON body on a GET). */
  async positions(): Promise<PositionView[]> {
    const r = await this.signed('GET', '/v1/user/me', { party: this.party });
    const list = Array.isArray(r.body?.positions) ? (r.body.positions as Array<Record<string, unknown>>) : [];
    return list.map((p) => ({ positionId: String(p.positionId), market: String(p.market), size: Number(p.size) }));
  }
}

export async function call(pool: Pool, method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<EngineAnswer> {
  const res = await pool.request({ method: method as 'GET', path, body, headers, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const text = await res.body.text();
  let parsed: Record<string, unknown> | null;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = null;
  }
  return { status: res.statusCode, body: parsed };
}

export function admin(pool: Pool, token: string, path: string, body: Record<string, unknown>): Promise<EngineAnswer> {
  return call(pool, 'POST', path, JSON.stringify(body), { authorization: `Bearer ${token}`, 'content-type': 'application/json' });
}
