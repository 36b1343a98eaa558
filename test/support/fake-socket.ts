// Just enough of a ws socket for the hub's unit tests: open, no backlog, records what it is sent
// (each message parsed as JSON, typed as the test reads it).
import WebSocket from 'ws';

export function fakeSocket<T = Record<string, unknown>>(): { ws: WebSocket; sent: T[] } {
  const sent: T[] = [];
  const ws = {
    readyState: WebSocket.OPEN,
    bufferedAmount: 0,
    send: (data: Buffer) => sent.push(JSON.parse(data.toString()) as T),
    on: () => ws,
    ping: () => {},
    terminate: () => {},
    close: () => {},
  };
  return { ws: ws as unknown as WebSocket, sent };
}
