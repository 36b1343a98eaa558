// The OpenTelemetry side of ./index.ts, imported only when traces are on. The official Node SDK
// reads the standard variables itself (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT
// and _PROTOCOL, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER[_ARG], OTEL_BSP_*,
// OTEL_PROPAGATORS); this module only says what the gateway adds: no automatic instrumentation,
// no OpenTelemetry metrics or logs (Prometheus and pino carry those), one span per HTTP request
// from the Fastify team's instrumentation, and spans around what the gateway itself calls.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { FastifyPluginAsync } from 'fastify';
import type { ActiveTracing, SpanNote, TraceOptions, TracingStartOptions } from './index.js';

/** Scraped and probed every few seconds: a span each would drown the requests worth reading. */
const UNTRACED_PATHS = new Set(['/metrics', '/healthz', '/readyz']);

export function startSdk(serviceName: string, options: TracingStartOptions): ActiveTracing {
  // Traces only: the SDK would otherwise also start OTLP metric and log exporters by default.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const sdk = new NodeSDK({
    // OTEL_SERVICE_NAME wins; the gateway's name only replaces the SDK's "unknown_service".
    ...(process.env.OTEL_SERVICE_NAME ? {} : { serviceName }),
    instrumentations: [],
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors as SpanProcessor[] } : {}),
  });
  sdk.start();
  const tracer = trace.getTracer('trading-gateway');

  const requests = new FastifyOtelInstrumentation({
    // One span per request: no span per hook or for the handler (the request span is their parent).
    instrumentHooks: false,
    instrumentHandler: false,
    ignorePaths: ({ url }) => UNTRACED_PATHS.has(url.split('?', 1)[0]!),
    // Named by method and route template (`POST /v1/orders`), never by the concrete URL.
    requestHook: (span, request) => {
      const route = request.routeOptions.url;
      span.updateName(route ? `${request.method} ${route}` : request.method);
    },
  });

  return {
    traced<T>(name: string, work: (span: SpanNote) => Promise<T>, how: TraceOptions): Promise<T> {
      const parent = context.active();
      if (how.childOnly && trace.getSpan(parent)?.isRecording() !== true) return work(SILENT);
      const kind = how.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL;
      return tracer.startActiveSpan(name, { kind, ...(how.attributes ? { attributes: how.attributes } : {}) }, parent, async (span) => {
        try {
          return await work(noteOn(span));
        } catch (err) {
          span.recordException(err as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
          throw err;
        } finally {
          span.end();
        }
      });
    },
    traceHeaders(headers: Record<string, string>): Record<string, string> {
      const carrier = { ...headers };
      propagation.inject(context.active(), carrier);
      return carrier;
    },
    httpPlugin: requests.plugin() as unknown as FastifyPluginAsync,
    shutdown: () => sdk.shutdown(),
  };
}

const SILENT: SpanNote = { set() {} };

function noteOn(span: Span): SpanNote {
  return {
    set(key, value) {
      span.setAttribute(key, value);
    },
  };
}
