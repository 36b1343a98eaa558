// A stream frame's bytes, kept once: the whole WebSocket frame (header + payload) in one Buffer, and
// the payload (the JSON text) as a view into it. The replay history holds WS_HISTORY_SIZE of these;
// holding the JSON and a framed copy of it apart kept every frame's bytes twice.

/** A server's text message, final, unmasked (RFC 6455 §5.2): FIN and opcode 1. */
const FIN_TEXT = 0x81;

export interface FramedText {
  /** The JSON text's bytes: a view into `wire` (for deflate connections, byte counts, tests). */
  data: Buffer;
  /** The whole WebSocket frame, written as is to every plain connection. */
  wire: Buffer;
}

/** Serialised text → its WebSocket frame, in one allocation. */
export function framedText(text: string): FramedText {
  const length = Buffer.byteLength(text);
  const header = length < 126 ? 2 : length <= 0xffff ? 4 : 10;
  const wire = Buffer.allocUnsafe(header + length);
  wire[0] = FIN_TEXT;
  if (header === 2) wire[1] = length;
  else if (header === 4) {
    wire[1] = 126;
    wire.writeUInt16BE(length, 2);
  } else {
    wire[1] = 127;
    wire.writeBigUInt64BE(BigInt(length), 2);
  }
  wire.write(text, header, 'utf8');
  return { data: wire.subarray(header), wire };
}
