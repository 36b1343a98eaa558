// CORS for every route, from CORS_ORIGINS (docs/trading.md "CORS"). `corsOrigin` answers the same
// question for replies written outside the CORS plugin (router errors, refused WebSocket upgrades).
import cors from '@fastify/cors';
import fp from 'fastify-plugin';

export const ALLOWED_HEADERS = ['content-type', 'x-user', 'x-session-id', 'x-session-sig', 'x-request-id', 'last-event-id'];

/**
 * The Access-Control-Allow-Origin for a request's Origin: `*` when configured, else the Origin
 * when it is listed, else none (null).
 */
export function corsOrigin(corsOrigins: readonly string[], origin: string | undefined): string | null {
  if (corsOrigins.includes('*')) return '*';
  return origin !== undefined && corsOrigins.includes(origin) ? origin : null;
}

export const corsPolicy = fp(
  async (app) => {
    const origins = app.config.corsOrigins;
    await app.register(cors, {
      origin: origins.includes('*') ? '*' : origins,
      methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
      allowedHeaders: ALLOWED_HEADERS,
      exposedHeaders: ['retry-after', 'x-request-id'],
      maxAge: 600,
      // A plain OPTIONS that is not a CORS preflight falls through to the routes (404 in our shape).
      strictPreflight: false,
    });
  },
  { name: 'cors-policy', fastify: '5.x', dependencies: ['dependencies'] },
);
