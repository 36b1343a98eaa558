// One logical stream client of the soak: a series of WebSocket connections with one filter. What it
// receives is kept as segments: runs of frames that must equal the engine's log under the filter,
// without loss, repeat or reordering. A segment ends only where the gateway announced a
// discontinuity (`stream.gap`, `stream.reset`, close 4011 or 1001) or, for a client that does not
// resume (`since=`), where its connection ended. Snapshot frames (`snapshot: true`) are state, not
// events, and `orderbook.snapshot` frames are polled state: neither is compared with the log.
import WebSocket from 'ws';
import { canonical, hash30, kindId } from './frames.js';

export interface ClientSpec {
  name: string;
  /** kinds, markets, party: as the query parameters (comma lists). */
  filter: { kinds?: string; markets?: string; party?: string };
  /** Reconnect with `since=<last seq>` (and `epoch=` once the gateway named one). */
  resume: boolean;
  /** Ask for control messages without `since` (a resuming client always gets them). */
  control: boolean;
  /** Other query parameters (heartbeat, snapshot). */
  extra?: Record<string, string>;
  /** Slow reader: stop reading for `pauseMs` every `everyMs`. */
  slow?: { pauseMs: number; everyMs: number };
}

export interface Segment {
  client: string;
  why: string;
  /** Frames above this seq are owed to the client (exclusive lower bound); null: from the first frame. */
  start: number | null;
  /**
   * Frames up to this seq only are owed (inclusive upper bound): the `requestedSince` of the
   * `stream.gap` that ended the segment (what follows it the gateway announced as unavailable, to be
   * backfilled from REST); null: up to the last frame received (or the head, when open at the end).
   */
  end: number | null;
  kinds: number[];
  seqs: number[];
  hashes: number[];
  /** The connection was still open when the run ended: the segment must reach the engine's head. */
  openAtEnd: boolean;
  /** position.update (1) and balance.update (2) frames: their seqs and kinds, counted per fill leg. */
  legSeqs: number[];
  legKinds: number[];
  domainProblems: string[];
  lastDomainSeq: number;
  seenAtSeq: Set<number>;
  seenSeq: number;
}

const DOMAIN = new Set(['position.update', 'balance.update', 'candle.update', 'candle.close']);

export class StreamClient {
  readonly segments: Segment[] = [];
  readonly closes = new Map<number, number>();
  readonly announced = { gap: 0, reset: 0, close4011: 0, close1001: 0 };
  connects = 0;
  connectFailures = 0;
  refusals = new Map<number, number>();
  snapshotFrames = 0;
  heartbeats = 0;
  /** The gateway named an epoch in `stream.subscribed` (the stream's epoch extension is there). */
  sawEpoch = false;
  frames = 0;
  /** Called for every compared frame (recovery probes). */
  onFrame: ((kind: number, seq: number, hash: number) => void) | null = null;

  private ws: WebSocket | null = null;
  private current: Segment | null = null;
  private lastSeq: number | null = null;
  private epoch: string | null = null;
  private stopped = false;
  private slowTimer: NodeJS.Timeout | null = null;
  private calmed = false;
  /**
   * The newest seq of the frames received (over the client's resumed connections) that the gateway's
   * replay history holds (every frame but control messages and `snapshot: true` state), and how many
   * of them had it.
   */
  private tailSeq = -1;
  private tailCount = 0;
  /**
   * After a cut connection (closed without a close frame: 1006), the client cannot know whether it
   * received the whole of its last seq; it resumes from the seq before and drops the first `count`
   * frames of `seq` the replay sends, which are the ones it already has (the replay sends a seq's
   * frames in the order they went out live). null: nothing to drop.
   */
  private skip: { seq: number; count: number } | null = null;
  /** The connection being opened resumes a cut one (its `since` is the seq before the last received). */
  private cut = false;

  constructor(private readonly baseUrl: string, readonly spec: ClientSpec) {}

  start(): void {
    this.connect();
    if (this.spec.slow) {
      const { pauseMs, everyMs } = this.spec.slow;
      const pause = (): void => {
        const ws = this.ws;
        if (!ws || ws.readyState !== WebSocket.OPEN || this.calmed) return;
        ws.pause();
        setTimeout(() => ws.resume(), pauseMs).unref(); // (resuming a closed socket does nothing)
      };
      // First pause soon after the start, so even the short run sees one.
      setTimeout(pause, 5000).unref();
      this.slowTimer = setInterval(pause, everyMs);
    }
  }

  private url(): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...this.spec.filter, ...this.spec.extra })) if (v) q.set(k, v);
    if (this.spec.resume && this.lastSeq !== null) {
      // After a cut, from the seq before the last one received: docs/stream.md "Replay and reconnect".
      q.set('since', String(this.cut ? this.lastSeq - 1 : this.lastSeq));
      if (this.epoch !== null) q.set('epoch', this.epoch);
    } else if (this.spec.resume || this.spec.control) {
      q.set('control', 'true');
    }
    return `${this.baseUrl}/v1/stream?${q}`;
  }

  private newSegment(why: string, start: number | null): void {
    this.current = { client: this.spec.name, why, start, end: null, kinds: [], seqs: [], hashes: [], openAtEnd: false, legSeqs: [], legKinds: [], domainProblems: [], lastDomainSeq: -1, seenAtSeq: new Set(), seenSeq: -1 };
    this.segments.push(this.current);
  }

  private connect(): void {
    if (this.stopped) return;
    const resuming = this.spec.resume && this.lastSeq !== null;
    const ws = new WebSocket(this.url(), { perMessageDeflate: false, handshakeTimeout: 15_000 });
    this.ws = ws;
    let opened = false;
    ws.on('unexpected-response', (_req, res) => {
      this.refusals.set(res.statusCode ?? 0, (this.refusals.get(res.statusCode ?? 0) ?? 0) + 1);
      res.resume();
      ws.terminate();
    });
    ws.on('open', () => {
      opened = true;
      this.connects++;
      // A resumed connection continues the client's segment; any other starts a new one.
      if (!resuming || this.current === null) this.newSegment(resuming ? 'since' : 'connect', resuming ? this.lastSeq : null);
    });
    ws.on('message', (data) => this.onMessage(String(data)));
    ws.on('error', () => {});
    ws.on('close', (code) => {
      this.ws = null;
      if (this.stopped) return;
      if (!opened) this.connectFailures++;
      else this.closes.set(code, (this.closes.get(code) ?? 0) + 1);
      if (code === 4011) this.announced.close4011++;
      if (code === 1001) this.announced.close1001++;
      if (!this.spec.resume || code === 4011 || code === 1001) this.current = null;
      if (code === 4011) this.lastSeq = null; // bootstrap again: a fresh connection
      // 1006: no close frame, the socket was cut (a ping unanswered, the 5 s after a 4008 close the
      // client could not read): the bytes that reached it may end inside an event.
      // (A connection that never opened changes nothing: the next attempt resumes the same way.)
      if (opened) {
        this.cut = code === 1006 && this.spec.resume && this.lastSeq !== null && this.tailSeq === this.lastSeq;
        this.skip = this.cut ? { seq: this.tailSeq, count: this.tailCount } : null;
      }
      if (code === 4011) this.tailSeq = -1;
      setTimeout(() => this.connect(), opened ? 100 : 500).unref();
    });
  }

  private onMessage(text: string): void {
    const f = JSON.parse(text) as { kind: string; seq: number; payload: Record<string, unknown>; snapshot?: boolean };
    this.frames++;
    if (f.kind.startsWith('stream.')) {
      if (f.kind === 'stream.subscribed' && typeof f.payload.epoch === 'string') {
        this.epoch = f.payload.epoch;
        this.sawEpoch = true;
      }
      if (f.kind === 'stream.heartbeat') this.heartbeats++;
      if (f.kind === 'stream.gap') {
        this.announced.gap++;
        // What follows `requestedSince` was announced unavailable: the segment it ends owes no more.
        const requested = f.payload.requestedSince;
        if (this.current && typeof requested === 'number') this.current.end = requested;
        this.skip = null; // the replay starts past the gap: nothing of the cut seq comes again
        // Owed: everything from the oldest seq the gateway says it still has.
        const oldest = f.payload.oldestAvailableSeq;
        this.newSegment('gap', typeof oldest === 'number' ? oldest - 1 : null);
      }
      if (f.kind === 'stream.reset') {
        this.announced.reset++;
        this.epoch = typeof f.payload.epoch === 'string' ? f.payload.epoch : this.epoch;
        this.lastSeq = f.seq;
        this.skip = null;
        this.tailSeq = -1;
        this.tailCount = 0;
        this.newSegment('reset', f.seq);
      }
      return;
    }
    if (f.snapshot === true) {
      this.snapshotFrames++;
      return;
    }
    if (this.skip) {
      // The replay after a cut: the frames of the cut seq the client already has come first.
      if (f.seq === this.skip.seq && this.skip.count > 0) {
        this.skip.count--;
        return;
      }
      this.skip = null;
    }
    this.tail(f.seq);
    if (f.kind === 'orderbook.snapshot') return;
    const seg = this.current;
    if (!seg) return;
    this.lastSeq = f.seq;
    const k = kindId(f.kind);
    if (k !== 0) {
      const h = hash30(canonical(f));
      seg.kinds.push(k);
      seg.seqs.push(f.seq);
      seg.hashes.push(h);
      this.onFrame?.(k, f.seq, h);
    } else if (DOMAIN.has(f.kind)) {
      if (f.seq < seg.lastDomainSeq && seg.domainProblems.length < 20) seg.domainProblems.push(`${f.kind} seq ${f.seq} after ${seg.lastDomainSeq}`);
      seg.lastDomainSeq = Math.max(seg.lastDomainSeq, f.seq);
      if (f.seq !== seg.seenSeq) {
        seg.seenSeq = f.seq;
        seg.seenAtSeq.clear();
      }
      if (f.kind === 'position.update' || f.kind === 'balance.update') {
        // One per fill leg: a party trading with itself gets two alike; counted against the log instead.
        seg.legSeqs.push(f.seq);
        seg.legKinds.push(f.kind === 'position.update' ? 1 : 2);
        return;
      }
      const h = hash30(text);
      if (seg.seenAtSeq.has(h) && seg.domainProblems.length < 20) seg.domainProblems.push(`${f.kind} seq ${f.seq} received twice`);
      seg.seenAtSeq.add(h);
    }
  }

  private tail(seq: number): void {
    if (seq === this.tailSeq) this.tailCount++;
    else if (seq > this.tailSeq) {
      this.tailSeq = seq;
      this.tailCount = 1;
    }
  }

  /** No more slow reading: the end of the run, when every client must catch up. */
  calm(): void {
    if (this.slowTimer) clearInterval(this.slowTimer);
    this.slowTimer = null;
    this.calmed = true;
    this.ws?.resume();
  }

  /** Marks the open connection's segment as owed everything up to the engine's head. */
  markOpenAtEnd(): void {
    if (this.ws && this.ws.readyState === WebSocket.OPEN && this.current) this.current.openAtEnd = true;
  }

  stop(): void {
    this.stopped = true;
    if (this.slowTimer) clearInterval(this.slowTimer);
    this.ws?.terminate();
  }
}
