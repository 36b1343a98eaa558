// The one door to tracing (docs/operations.md "Traces", docs/adr/0050-tracing.md). Everything else
// in the gateway calls these few functions and never imports OpenTelemetry: the HTTP layer asks for
// the request plugin, the engine client and the database wrap their one call site in `traced`, the
// engine client adds `traceHeaders` to what it sends.
//
// Off (the default) is a null check: the OpenTelemetry SDK is loaded only by `startTracing` when the
// standard OTEL_* variables turn traces on, so a gateway without them never even imports it.
import type { FastifyPluginAsync } from 'fastify';

/** What a traced piece of work may say about itself; ignored when tracing is off. */
export interface SpanNote {
  set(key: string, value: string | number | boolean): void;
}

export interface TraceOptions {
  kind?: 'client' | 'internal';
  attributes?: Record<string, string | number | boolean>;
  /** Only as a child of a traced request (the engine and database calls of background work are not traced alone). */
  childOnly?: boolean;
}

/** What the SDK module (./sdk.ts) provides once tracing is on. */
export interface ActiveTracing {
  traced<T>(name: string, work: (span: SpanNote) => Promise<T>, options: TraceOptions): Promise<T>;
  traceHeaders(headers: Record<string, string>): Record<string, string>;
  httpPlugin: FastifyPluginAsync;
  shutdown(): Promise<void>;
}

/** Test hook: span processors to use instead of the exporter the environment names. */
export interface TracingStartOptions {
  spanProcessors?: unknown[];
}

const SILENT: SpanNote = { set() {} };
let active: ActiveTracing | null = null;

export function tracingOn(): boolean {
  return active !== null;
}

/** Runs `work` inside a span named `name` (a child of the current one), or just runs it when off. */
export function traced<T>(name: string, work: (span: SpanNote) => Promise<T>, options: TraceOptions = {}): Promise<T> {
  return active === null ? work(SILENT) : active.traced(name, work, options);
}

/** `headers` plus the W3C `traceparent` (and `tracestate`) of the current span; the same object when off. */
export function traceHeaders(headers: Record<string, string>): Record<string, string> {
  return active === null ? headers : active.traceHeaders(headers);
}

/** The Fastify plugin that makes one span per request (named by route template), or null when off. */
export function httpTracingPlugin(): FastifyPluginAsync | null {
  return active?.httpPlugin ?? null;
}

/** Loads and starts the SDK (reads the OTEL_* variables itself). Call before the app is built. */
export async function startTracing(serviceName: string, options: TracingStartOptions = {}): Promise<void> {
  if (active !== null) return;
  const { startSdk } = await import('./sdk.js');
  active = startSdk(serviceName, options);
}

/** Flushes the spans still buffered and stops the SDK (graceful shutdown). */
export async function stopTracing(): Promise<void> {
  const current = active;
  active = null;
  await current?.shutdown();
}
