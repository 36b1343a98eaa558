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

/** The header's length of a server frame (unmasked) whose payload is `length` bytes (RFC 6455 §5.2). */
export function frameHeaderLength(length: number): number {
  return length < 126 ? 2 : length <= 0xffff ? 4 : 10;
}

/**
 * A frame of `length` payload bytes with its header written (`first`: FIN, RSV bits and opcode);
 * the payload goes at `header` onwards.
 */
export function allocFrame(first: number, length: number): { frame: Buffer; header: number } {
  const header = frameHeaderLength(length);
  const frame = Buffer.allocUnsafe(header + length);
  frame[0] = first;
  if (header === 2) frame[1] = length;
  else if (header === 4) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  return { frame, header };
}

/** Serialised text → its WebSocket frame, in one allocation. */
export function framedText(text: string): FramedText {
  const { frame: wire, header } = allocFrame(FIN_TEXT, Buffer.byteLength(text));
  wire.write(text, header, 'utf8');
  return { data: wire.subarray(header), wire };
}
