// Shutdown: requests already in flight finish and are answered `Connection: close`, idle keep-alive
// sockets are closed at once. A request can then only reach the app by racing
// closeIdleConnections() on a socket that was idle; that one gets 503 `shutting_down` in the usual
// shape (a safety net: Node reads nothing more from a socket answered `Connection: close`).
// Registered after CORS, so that 503 carries the CORS headers too. Callback-style hooks (no promise
// per request): they run on every request.
import fp from 'fastify-plugin';
import { ApiError } from '../errors.js';

export const gracefulShutdown = fp(
  async (app) => {
    let closing = false;
    app.addHook('preClose', (done) => {
      closing = true;
      app.server.closeIdleConnections();
      done();
    });
    app.addHook('onRequest', (_request, reply, done) => {
      if (!closing) return done();
      void reply.header('retry-after', '1');
      done(new ApiError('shutting_down', 'the gateway is shutting down; retry on another instance'));
    });
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (closing) void reply.header('connection', 'close');
      done(null, payload);
    });
  },
  { name: 'graceful-shutdown', fastify: '5.x' },
);
