// The frames one batch (the frames of one SSE chunk, StreamHub.batched) gives a connection, as a
// path in a tree made for the batch: each frame a connection is given moves it one step, to the
// child for that frame, made once for every connection that took the same frames in the same
// order. At the batch's end each connection writes its path's bytes as one Buffer, joined once per
// distinct path: connections with the same filters (thousands of `kinds=trade` screens) share one
// Buffer and one plain socket write each, where corking every socket queued a write request per
// frame per connection and uncorked it into a vectored write.

/**
 * Joining copies the frames: a long path that no other connection shares (a party's frames in a
 * catch-up chunk of 64 KiB) is written frame by frame instead, as one vectored write.
 */
export const JOIN_MAX_BYTES = 16 * 1024;

export class FramePath {
  /** The first path one frame longer, and the others by that frame's wire bytes (the same Buffer for every connection). */
  private first: FramePath | null = null;
  private more: Map<Buffer, FramePath> | null = null;
  private joined: Buffer | null = null;
  /** Connections whose pending frames end here now. */
  private holders = 0;
  /** Bytes of every frame on the path (what a connection has pending in this batch). */
  readonly bytes: number;

  /** The root of a batch's tree: no frames. */
  constructor();
  constructor(parent: FramePath, wire: Buffer);
  constructor(
    private readonly parent: FramePath | null = null,
    private readonly wire: Buffer | null = null,
  ) {
    this.bytes = (parent?.bytes ?? 0) + (wire?.length ?? 0);
  }

  /** A connection on this path is given the frame `wire`: the path it is on now. */
  then(wire: Buffer): FramePath {
    let path: FramePath | undefined;
    if (this.first?.wire === wire) path = this.first;
    else if (this.first === null) path = this.first = new FramePath(this, wire);
    else {
      this.more ??= new Map();
      path = this.more.get(wire);
      if (!path) this.more.set(wire, (path = new FramePath(this, wire)));
    }
    this.holders--;
    path.holders++;
    return path;
  }

  /**
   * A connection on this path writes it: its bytes as one Buffer (shared, joined once) when another
   * connection holds the same path, or it is a single frame or short; null when the connection should
   * write `frames()` one by one.
   */
  take(): Buffer | null {
    const join = this.joined !== null || this.holders > 1 || this.bytes <= JOIN_MAX_BYTES || this.parent?.wire == null;
    this.holders--;
    return join ? this.buffer() : null;
  }

  /** The path's frames in order. */
  frames(): Buffer[] {
    const parts: Buffer[] = this.wire ? [this.wire] : [];
    for (let p = this.parent; p !== null && p.wire !== null; p = p.parent) parts.push(p.wire);
    return parts.reverse();
  }

  /** The path's frames in order, as one Buffer (a single frame is its own Buffer, not a copy). */
  buffer(): Buffer {
    if (this.joined) return this.joined;
    const parts = this.frames();
    this.joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts, this.bytes);
    return this.joined;
  }
}
