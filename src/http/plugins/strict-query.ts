// Query strings are strict on every /v1 route: an unknown or misspelt parameter is a 400 naming it,
// never silently ignored (a dropped filter would answer with the wrong data), and integer parameters
// are plain decimal digits (strict-integers.ts). Registered before the routes: it works on `onRoute`.
import fp from 'fastify-plugin';
import { strictIntegers } from '../strict-integers.js';

export const strictQuery = fp(
  async (app) => {
    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith('/v1/') || !route.schema) return;
      const qs = route.schema.querystring as { type?: string; additionalProperties?: unknown } | undefined;
      if (!qs) route.schema.querystring = { type: 'object', properties: {}, additionalProperties: false };
      else if (qs.type === 'object' && qs.additionalProperties === undefined) {
        route.schema.querystring = { ...qs, additionalProperties: false };
      }
    });
    strictIntegers(app);
  },
  { name: 'strict-query', fastify: '5.x' },
);
