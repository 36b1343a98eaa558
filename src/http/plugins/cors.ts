// CORS for every route, from CORS_ORIGINS (docs/trading.md "CORS"). Replies written outside this
// plugin (router errors, refused upgrades, parser errors) ask `allowedOrigin` (raw-error.ts).
import cors from '@fastify/cors';
import fp from 'fastify-plugin';

export const ALLOWED_HEADERS = ['content-type', 'x-user', 'x-session-id', 'x-session-sig', 'x-request-id', 'last-event-id'];

export const corsPolicy = fp(
  async (app) => {
    const origins = app.config.corsOrigins;
    await app.register(cors, {
      origin: origins.includes('*') ? '*' : origins,
      methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
      allowedHeaders: ALLOWED_HEADERS,
      exposedHeaders: ['retry-after', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'],
      maxAge: 600,
      // A plain OPTIONS that is not a CORS preflight falls through to the routes (404 in our shape).
      strictPreflight: false,
    });
  },
  { name: 'cors-policy', fastify: '5.x', dependencies: ['dependencies'] },
);
