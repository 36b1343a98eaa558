// Preloaded into a gateway process by test/e2e/tracing/otlp-export.test.ts: writes one line to stderr
// for every OpenTelemetry SDK module the process resolves, so a test can see whether it loaded any.
import { registerHooks } from 'node:module';
import process from 'node:process';

registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith('@opentelemetry/sdk') || specifier.startsWith('@fastify/otel')) process.stderr.write(`otel-sdk-loaded ${specifier}\n`);
    return next(specifier, context);
  },
});
