// One HTTP request from a chosen local address (127.0.0.x on loopback), so tests can be several
// client IPs. node:http because undici's Agent does not honour `localAddress`.
import { request, type IncomingHttpHeaders } from 'node:http';

export interface FromResult {
  status: number;
  headers: IncomingHttpHeaders;
  json: any;
}

export function httpFrom(localAddress: string, url: string, method: string, headers: Record<string, string> = {}, body?: string): Promise<FromResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : undefined });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
