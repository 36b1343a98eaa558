// A real `ws` socket adapted to the client's WebSocketLike, with the test's hooks on what it sends
// and what it receives: a test sees (or changes, or drops) the wire without mocking the client.
import { WebSocket } from 'ws';
import type { WebSocketCtor, WebSocketLike } from '../../packages/client/src/index.js';

export interface SocketTaps {
  /** Each URL opened. */
  opened?: string[];
  /** Each message the client sends, as text, before it goes out. */
  sent?(text: string): void;
  /** Each message received, as text: what to hand the client instead (null: dropped). */
  received?(text: string): string | null;
}

export function tappedSocket(taps: SocketTaps): WebSocketCtor {
  return function (this: unknown, url: string) {
    taps.opened?.push(url);
    const ws = new WebSocket(url);
    const like: WebSocketLike = {
      onopen: null,
      onmessage: null,
      onclose: null,
      onerror: null,
      send: (data) => {
        taps.sent?.(String(data));
        ws.send(data);
      },
      close: (code, reason) => ws.close(code, reason),
    };
    ws.on('open', () => like.onopen?.({}));
    ws.on('error', (e) => like.onerror?.(e));
    ws.on('close', (code, reason) => like.onclose?.({ code, reason: reason.toString() }));
    ws.on('message', (data) => {
      const text = taps.received ? taps.received(data.toString()) : data.toString();
      if (text !== null) like.onmessage?.({ data: text });
    });
    return like;
  } as unknown as WebSocketCtor;
}
