// A frame compressed once for every deflate connection (permessage-deflate, RFC 7692; ADR 0367).
// The gateway negotiates no context takeover for its own messages (server_no_context_takeover), so
// each message is compressed from a fresh state: its compressed bytes depend only on the text and
// the compressor's parameters, and are the same for every connection that negotiated the same
// window. They are made here once per frame and window, and written to each connection's socket as
// the plain connections' shared frame is, instead of each connection compressing the same frame
// again through ws's sender (about 75 µs of CPU a frame, and ~90–100 KiB of zlib state kept by each
// connection once it had compressed: docs/stream.md "Compression").
import { constants, deflateRawSync } from 'node:zlib';
import { allocFrame } from './framed-text.js';

/** FIN, RSV1 (the message is compressed), opcode 1 (text). */
const FIN_RSV1_TEXT = 0xc1;
/** What a deflate stream flushed with Z_SYNC_FLUSH ends with, and a message leaves out (RFC 7692 §7.2.1). */
const TAIL_BYTES = 4;
/** The compressor's parameters (memLevel 4, level 6: as ws was configured, hub.ts). */
const LEVEL = 6;
const MEM_LEVEL = 4;

/** Compressed frames by text and window: kept while the text is (a frame of the replay history, a frame being published). */
const made = new WeakMap<Buffer, Array<Buffer | undefined>>();

/**
 * The window bits a deflate connection's messages from the gateway must fit: `server_max_window_bits`
 * of the parameters ws accepted for it (it answers the configured 10 to every offer it accepts, and
 * refuses an offer under it), 15 when none was negotiated (RFC 7692 §7.1.2.1). ws keeps them on its
 * extension object only (`ws.extensions` names the extension): read there; unreadable, 9, the
 * smallest window Node's raw deflate takes, which any window a client accepted holds.
 */
export function serverWindowBits(ws: unknown): number {
  const params = (ws as { _extensions?: Record<string, { params?: Record<string, unknown> } | undefined> })._extensions?.['permessage-deflate']?.params;
  if (!params) return 9;
  const bits = params.server_max_window_bits;
  if (bits === undefined) return 15;
  return typeof bits === 'number' && bits >= 9 && bits <= 15 ? bits : 9;
}

/** The whole WebSocket frame of `text` compressed with a window of `windowBits` (made once per text and window). */
export function deflatedFrame(text: Buffer, windowBits: number): Buffer {
  let byBits = made.get(text);
  const known = byBits?.[windowBits];
  if (known) return known;
  const full = deflateRawSync(text, { windowBits, memLevel: MEM_LEVEL, level: LEVEL, finishFlush: constants.Z_SYNC_FLUSH });
  const length = full.length - TAIL_BYTES;
  const { frame, header } = allocFrame(FIN_RSV1_TEXT, length);
  full.copy(frame, header, 0, length);
  if (!byBits) made.set(text, (byBits = []));
  byBits[windowBits] = frame;
  return frame;
}
