// Node entry. Everything of the browser entry, plus `getUserMe`: the engine's `GET /v1/user/me`
// wants a signed JSON body on a GET, which browser `fetch` forbids (and undici's fetch in Node as
// well), so it is sent with `node:http`/`node:https`. Browsers cannot call it at all (docs/client.md);
// they build the same view from the party-scoped REST reads and the stream.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { GatewayClient } from './client.js';
import type { Sender } from './transport.js';
import type { Answer, UserMe } from './types.js';

export * from './index.js';

/** A Sender over node:http that, unlike fetch, sends a body with any method. */
export const nodeSender: Sender = ({ method, url, headers, body }) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const payload = body === undefined ? undefined : Buffer.from(body, 'utf8');
    const req = send(target, { method, headers: payload ? { ...headers, 'content-length': String(payload.length) } : headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });

/** The party as the engine sees it (balance, positions, open orders, triggers). Needs a session. */
export async function getUserMe(client: GatewayClient): Promise<Answer<UserMe>> {
  const session = client.session;
  if (!session) throw new Error('getUserMe needs a session: call createSession first');
  return client.transport.call({ method: 'GET', path: '/v1/user/me', body: { party: session.party }, signed: true, sender: nodeSender });
}
