// A tiny programmable engine HTTP server on 127.0.0.1 for failures the reference engine never
// produces on demand (HTML 502s, hangs, resets). It records every request it receives exactly as
// it arrived (raw header list, target, body bytes), so tests can prove what was (not) forwarded.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  url: string;
  /** Header names lower-cased → every value received (repeats kept). */
  headers: Record<string, string[]>;
  body: Buffer;
  /** Client port of the TCP connection it came on (same port = a reused keep-alive connection). */
  remotePort: number;
}

export type FakeAnswer =
  | { status: number; body: string | object; headers?: Record<string, string>; delayMs?: number }
  | { hang: true }
  | { reset: true }
  /** Headers at once (status 200, a long Content-Length), then one body byte every `everyMs`, never done. */
  | { trickleEveryMs: number };

export interface FakeEngine {
  url: string;
  requests: RecordedRequest[];
  /** Hanging requests the gateway gave up on (closed the connection before an answer). */
  abandoned: number;
  /** Decides the answer to each request; replace it per test. */
  respond: (req: RecordedRequest) => FakeAnswer;
  close(): Promise<void>;
}

function collectHeaders(req: IncomingMessage): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!.toLowerCase();
    (out[name] ??= []).push(req.rawHeaders[i + 1]!);
  }
  return out;
}

export const okJson = (body: object, status = 200): FakeAnswer => ({ status, body });

export async function startFakeEngine(): Promise<FakeEngine> {
  const hanging = new Set<ServerResponse>();
  const fake: FakeEngine = {
    url: '',
    requests: [],
    abandoned: 0,
    respond: () => okJson({ ok: true }),
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: collectHeaders(req), body: Buffer.concat(chunks), remotePort: req.socket.remotePort ?? 0 };
      fake.requests.push(recorded);
      const answer = fake.respond(recorded);
      if ('hang' in answer) {
        hanging.add(res);
        res.on('close', () => {
          if (hanging.delete(res)) fake.abandoned++;
        });
        return;
      }
      if ('reset' in answer) {
        req.socket.destroy();
        return;
      }
      if ('trickleEveryMs' in answer) {
        hanging.add(res);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000000' });
        res.write('{');
        const timer = setInterval(() => res.write(' '), answer.trickleEveryMs);
        res.on('close', () => {
          clearInterval(timer);
          if (hanging.delete(res)) fake.abandoned++;
        });
        return;
      }
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      const type = typeof answer.body === 'string' ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8';
      const send = () => {
        hanging.delete(res);
        res.writeHead(answer.status, { 'content-type': type, 'content-length': Buffer.byteLength(text), ...answer.headers });
        res.end(text);
      };
      if (answer.delayMs === undefined) return send();
      hanging.add(res); // closed by close() if the test ends first
      setTimeout(() => {
        if (!res.destroyed) send();
      }, answer.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return fake;
}
