// Reads the first event of the engine's history (seq 1) from its admin SSE stream, replayed with
// `Last-Event-ID: 0`, then lets go of the connection. Used to derive the stream epoch
// (src/stream/epoch.ts). Null when the engine no longer has seq 1 (410), refuses, or sends no
// event within the time allowed.
import { request } from 'undici';
import { createParser } from 'eventsource-parser';
import { parseEngineEvent, type EngineEvent } from '../contracts/engine-event.js';

/** An engine event is a few hundred bytes; this leaves room for any real one (SSE_MAX_EVENT_BYTES). */
export const DEFAULT_MAX_EVENT_BYTES = 1_048_576;

export async function readFirstEngineEvent(url: string, token: string, timeoutMs: number): Promise<EngineEvent | null> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'last-event-id': '0' },
      signal: ac.signal,
      headersTimeout: timeoutMs,
      bodyTimeout: 0,
    });
    if (res.statusCode !== 200) {
      await res.body.dump().catch(() => {});
      return null;
    }
    let first: EngineEvent | null = null;
    let oversized = false;
    const parser = createParser({
      // Bounded as the bridge is: a line that never ends gives no first event.
      maxBufferSize: DEFAULT_MAX_EVENT_BYTES,
      onError: (err) => void (oversized ||= err.type === 'max-buffer-size-exceeded'),
      onEvent: (m) => {
        first ??= parseEngineEvent(m.data);
      },
    });
    const decoder = new TextDecoder();
    for await (const chunk of res.body) {
      parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
      if (first || oversized) break;
    }
    return first;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}
