// Who a connection belongs to, decided once for every per-client bound (docs/security.md):
// - the client is the forwarded address Fastify gives as `request.ip` (TRUST_PROXY decides how far
//   X-Forwarded-For is believed), so the stream caps key on the same client as the rate limits;
// - IPv6 addresses count by their /64, as @fastify/rate-limit groups them: one host usually holds a
//   whole /64, so rotating addresses inside it must not buy more connections.
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import { Address6 } from 'ip-address';
import { isIPv6 } from 'node:net';

export type TrustFunction = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY (the config's trustProxy) as the function Fastify and the stream upgrade both use. A hop count trusts that
 * many hops whoever connects (Fastify itself refuses hop counts, so it is passed as a function);
 * an address list trusts only those peers. Null: trust nobody (the socket's peer is the client).
 */
export function trustFunction(trust: false | number | string[]): TrustFunction | null {
  if (trust === false) return null;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  return proxyAddr.compile(trust);
}

/** The client's address for a raw request: the socket's peer, or the forwarded client behind a trusted proxy (= `request.ip`). */
export function clientIp(req: IncomingMessage, trust: TrustFunction | null): string {
  if (!trust) return req.socket.remoteAddress ?? 'unknown';
  return proxyAddr(req, trust);
}

/** The key a client address is counted under: IPv4 as is, IPv4-mapped IPv6 as IPv4, other IPv6 by its /64. */
export function addressGroup(ip: string): string {
  if (!isIPv6(ip)) return ip.toLowerCase();
  const address = new Address6(ip);
  if (address.isMapped4()) return address.to4().correctForm();
  return `${new Address6(`${ip}/64`).startAddress().correctForm()}/64`;
}
