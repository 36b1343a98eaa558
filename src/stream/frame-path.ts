// The frames one batch (the frames of one SSE chunk, StreamHub.batched) gives a connection, as a
// path in a tree made for the batch: each frame a connection is given moves it one step, to the
// child for that frame, made once for every connection that took the same frames in the same
// order. At the batch's end each connection writes its path's bytes as one Buffer, joined once per
// distinct path: connections with the same filters (thousands of `kinds=trade` screens) share one
// Buffer and one plain socket write each, where corking every socket queued a write request per
// frame per connection and uncorked it into a vectored write.
export class FramePath {
  /** The paths one frame longer, by that frame's wire bytes (the same Buffer for every connection). */
  private readonly next = new Map<Buffer, FramePath>();
  private joined: Buffer | null = null;

  /** The root of a batch's tree: no frames. */
  constructor();
  constructor(parent: FramePath, wire: Buffer);
  constructor(
    private readonly parent: FramePath | null = null,
    private readonly wire: Buffer | null = null,
  ) {
    this.bytes = (parent?.bytes ?? 0) + (wire?.length ?? 0);
  }

  /** Bytes of every frame on the path (what a connection has pending in this batch). */
  readonly bytes: number;

  /** This path followed by the frame `wire`. */
  then(wire: Buffer): FramePath {
    let path = this.next.get(wire);
    if (!path) this.next.set(wire, (path = new FramePath(this, wire)));
    return path;
  }

  /** The path's frames in order, as one Buffer (a single frame is its own Buffer, not a copy). */
  buffer(): Buffer {
    if (this.joined) return this.joined;
    const parts: Buffer[] = this.wire ? [this.wire] : [];
    for (let p = this.parent; p !== null && p.wire !== null; p = p.parent) parts.push(p.wire);
    parts.reverse();
    this.joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts, this.bytes);
    return this.joined;
  }
}
