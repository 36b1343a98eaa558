// The opening of a /v1/stream connection, between its registration in the hub and live traffic:
// control messages, the replay of `since` from the history, the snapshot frames, then the live
// frames the hub held for it meanwhile, in that order, with no gap or repeat (docs/stream.md).
//
// The hub registers the connection and sets `client.held = []` in the same synchronous step as any
// publish; from then on it appends the connection's live frames there instead of writing them.
// The opener writes the opening, paced by the socket's drain, then the held frames, and sets
// `held` back to null: from then on the hub writes live frames directly.
import WebSocket from 'ws';
import type { Frame } from '../contracts/frame.js';
import type { StreamClient } from './client.js';
import { wireFrame } from './client.js';
import { framedText } from './framed-text.js';
import { control, json, subscribedMessage, type ResetReason } from './control.js';
import type { History, Sent } from './history.js';
import type { SnapshotParts } from './snapshot.js';
import { matches, type Subscription } from './subscription.js';

/** What the hub reads from the live runtime: readiness, the epoch, the head, and the state for snapshots. */
export interface StreamStateSource {
  /**
   * Whether new connections may be opened now: the epoch is derived and, for a fleet replica, the
   * start-up catch-up with the stream's head is done (the events it replays to fill its history
   * must never reach a client as live frames).
   */
  ready(): boolean;
  /** Resolves once `ready()`. */
  whenReady(): Promise<void>;
  /** The identity of the engine history being streamed; null while it is first being derived. */
  epoch(): string | null;
  /** The newest seq the gateway has; null before any. */
  head(): number | null;
  /** The snapshot frames for a new connection, as of now. */
  snapshot(sub: Subscription): SnapshotParts;
}

/** Replay and snapshot frames are written while the client's unsent bytes stay under this; then the drain is awaited. */
const REPLAY_HIGH_WATER = 256 * 1024;

export interface OpenerOptions {
  state: StreamStateSource;
  history: History;
  /** The slow-consumer bound of a connection (the high-water mark of an opening stays well below it). */
  bufferBytes: number;
}

export class ConnectionOpener {
  /** Below the slow-consumer bound, so a connection going live never starts near it. */
  private readonly highWater: number;

  constructor(private readonly options: OpenerOptions) {
    this.highWater = Math.max(1, Math.min(REPLAY_HIGH_WATER, Math.floor(options.bufferBytes / 4)));
  }

  /**
   * Opens a registered connection whose `held` list the hub has just set. Runs synchronously up
   * to its first wait (the drain of a large replay, the database part of a snapshot); live frames
   * wait in `client.held` meanwhile, and only they count against the slow-consumer bound: a replay
   * is paced by the client's own reading. true once the connection is live (`held` is null again);
   * false when it closed meanwhile.
   */
  async open(client: StreamClient): Promise<boolean> {
    const sub = client.sub;
    // Nothing is held for the connection until the runtime is ready (the hub does not hold what
    // is published before): that is in the replay history and in the state the opening is made of.
    if (!this.options.state.ready()) await this.options.state.whenReady();
    const epoch = this.options.state.epoch()!;
    const head = this.options.state.head();
    const out: Buffer[] = [];
    // Control messages are not spec kinds: only for connections that opted in (control=true or since).
    if (sub.control) out.push(json(subscribedMessage(sub, epoch, head)));
    let since = sub.since;
    if (since !== null && sub.epoch !== null && sub.epoch !== epoch) {
      // Another history: its seqs mean nothing here. Served as a fresh connection (no replay).
      out.push(json(control('stream.reset', head ?? 0, { epoch, previousEpoch: sub.epoch, reason: 'epoch_mismatch' satisfies ResetReason })));
      since = null;
    }
    const replay: Sent[] = [];
    if (since !== null) {
      const covered = this.options.history.coveredAfter;
      if (covered === null || since < covered) {
        out.push(
          json(
            control('stream.gap', head ?? 0, {
              requestedSince: since,
              oldestAvailableSeq: covered === null ? null : covered + 1,
              backfill: `/v1/events?since=${since}`,
            }),
          ),
        );
      }
      // After a gap, nothing at or below `covered`: those seqs were announced as unavailable (the
      // client backfills them), and the oldest event held may have lost its first frames to eviction.
      const from = covered !== null && since < covered ? covered : since;
      for (const sent of this.options.history.after(from)) {
        if (!matches(sub, sent.frame)) continue;
        replay.push(sent);
      }
    }
    const snapshot = sub.snapshot ? this.options.state.snapshot(sub) : null;

    const first: OpeningItem[] = out.map((data) => ({ data }));
    for (const sent of replay) first.push({ data: sent.data, wire: sent.wire, seq: sent.frame.seq });
    return this.goLive(client, first, snapshot);
  }

  /**
   * A live connection changed its filters (a subscribe message): the hub has swapped them in and
   * set `client.held = []` in one synchronous step; the ack, then the snapshot frames of what was
   * added (`frames`, `later`), then the frames held meanwhile go out, in that order, as on opening.
   */
  resubscribed(client: StreamClient, ack: Buffer, snapshot: SnapshotParts | null): Promise<boolean> {
    return this.goLive(client, [{ data: ack }], snapshot);
  }

  /** Writes `first` and the snapshot, then the frames held meanwhile, then sets `held` back to null. */
  private async goLive(client: StreamClient, first: OpeningItem[], snapshot: SnapshotParts | null): Promise<boolean> {
    // Everything below waits only when it must (a drain, the database part of the snapshot): a
    // connection with nothing to wait for is opened, and live, within this synchronous step.
    for (const f of snapshot?.frames ?? []) first.push(snapshotData(f));
    // `await` only on a promise: awaiting a plain value would still give way to other work.
    let ok = this.writeOpening(client, first);
    if (typeof ok !== 'boolean') ok = await ok;
    if (!ok) return false;
    if (snapshot?.later) {
      client.uncork();
      const more = await snapshot.later;
      ok = this.writeOpening(client, more.map(snapshotData));
      if (typeof ok !== 'boolean') ok = await ok;
      if (!ok) return false;
    }
    // The frames held meanwhile, then live.
    while (client.held && client.held.length > 0) {
      const held = client.held;
      client.held = [];
      client.heldBytes = 0;
      ok = this.writeOpening(client, held);
      if (typeof ok !== 'boolean') ok = await ok;
      if (!ok) return false;
    }
    client.uncork();
    client.held = null;
    return !client.closing;
  }

  /**
   * Writes opening frames (not judged by the slow-consumer bound), corked in runs; past the
   * high-water mark of unsent bytes it waits for the socket's drain, so a replay goes at the
   * client's own reading speed. false when the connection closed. Synchronous (a boolean) unless
   * it had to wait: the caller awaits only then, so nothing else runs in between otherwise.
   */
  private writeOpening(client: StreamClient, items: readonly OpeningItem[], from = 0): boolean | Promise<boolean> {
    const open = (): boolean => !client.closing && client.ws.readyState === WebSocket.OPEN;
    for (let i = from; i < items.length; i++) {
      const item = items[i]!;
      if (!client.corked) client.cork();
      if (!client.write(item.data, item.wire ?? wireFrame(item.data))) return false;
      if (client.ws.bufferedAmount <= this.highWater) continue;
      // Never wait inside an event: the live frames held meanwhile may pass the bound and close the
      // connection (4008) during the wait, and what it was sent must then end between two events,
      // or `since=<last seq received>` would lose the rest of the last one (a few KB past the mark).
      if (item.seq !== undefined && items[i + 1]?.seq === item.seq) continue;
      client.uncork();
      return (async () => {
        while (open() && client.ws.bufferedAmount > this.highWater) await client.drained();
        return open() && this.writeOpening(client, items, i + 1);
      })();
    }
    return open();
  }
}

/** A frame of an opening: `seq` for the frames of events (replayed or held), which are written whole. */
interface OpeningItem {
  data: Buffer;
  wire?: Buffer;
  seq?: number;
}

/**
 * Snapshot bytes per frame object, and their WebSocket frame: the state's frames are shared by
 * every connection opened while they are current, so each is serialised and framed once, not per
 * connection (a herd of reconnecting clients would otherwise frame the same bytes thousands of times).
 */
const snapshotBytes = new WeakMap<Frame, { data: Buffer; wire: Buffer }>();

/** A snapshot frame: an ordinary frame of its kind with `"snapshot": true` in the envelope. */
function snapshotData(frame: Frame): { data: Buffer; wire: Buffer } {
  let bytes = snapshotBytes.get(frame);
  if (!bytes) {
    snapshotBytes.set(frame, (bytes = framedText(JSON.stringify({ ...frame, snapshot: true }))));
  }
  return bytes;
}
