// A stream connection opened from a given loopback address, as the per-address bounds see it:
// either open (its socket and its close code to come) or refused before the handshake (the
// refusal's status, headers and JSON body). Real `ws` clients; no handshake is faked.
import WebSocket from 'ws';

export type Opened = { ws: WebSocket; closed: Promise<number> };
export type Refused = { status: number; headers: Record<string, string | string[] | undefined>; body: Record<string, unknown> };

/**
 * `/v1/stream?<query>` from `from`: `offer` the permessage-deflate extension or not (threshold 0,
 * so the client compresses whatever it sends).
 */
export function streamFrom(url: string, from: string, query: string, offer: boolean): Promise<Opened | Refused> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/stream${query ? `?${query}` : ''}`, { localAddress: from, perMessageDeflate: offer ? { threshold: 0 } : false });
  const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, closed }));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    ws.once('error', reject);
  });
}

/** The connection, or an error naming the refusal. */
export function opened(o: Opened | Refused): Opened {
  if (!('ws' in o)) throw new Error(`refused ${o.status} ${JSON.stringify(o.body)}`);
  return o;
}
