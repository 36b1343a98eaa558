// Request bodies are kept as received (`request.rawBody`): signatures cover the raw bytes and the
// trading proxy forwards them unchanged. An empty body is allowed (DELETE, faucet). Any other
// declared content type is kept too (a browser may label JSON `text/plain`) but must be JSON, else 415.
import fp from 'fastify-plugin';
import { ApiError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The raw request body as received (signatures cover these bytes). */
    rawBody?: Buffer;
  }
}

export const bodyParsers = fp(
  async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
      request.rawBody = body;
      if (body.length === 0) return done(null, undefined);
      try {
        done(null, JSON.parse(body.toString('utf8')));
      } catch {
        done(new ApiError('bad_request', 'request body is not valid JSON'), undefined);
      }
    });
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
      request.rawBody = body;
      if (body.length === 0) return done(null, undefined);
      if (!request.headers['content-type']) {
        return done(new ApiError('unsupported_media_type', 'a request body needs a Content-Type (application/json)'), undefined);
      }
      try {
        done(null, JSON.parse(body.toString('utf8')));
      } catch {
        done(new ApiError('unsupported_media_type', 'request body must be JSON'), undefined);
      }
    });
  },
  { name: 'body-parsers', fastify: '5.x' },
);
