// The JetStream stream that carries the engine's events to the fleet (docs/fleet.md): one message
// per engine event, in engine seq order, with the engine seq as its message id (`Nats-Msg-Id`).
// The relay keeps the stream contiguous (each publish expects the previous seq as the stream's last
// message id), so stream order is engine order and no seq appears twice.
import { connect, DiscardPolicy, nanos, RetentionPolicy, StorageType, type JetStreamManager, type NatsConnection } from 'nats';

export interface StreamSettings {
  /** One server URL or a comma-separated list of a cluster's seeds (NATS_URL). */
  url: string;
  stream: string;
  subject: string;
  maxAgeS: number;
  maxBytes: number;
  /** Copies of the stream on a cluster (NATS_STREAM_REPLICAS), used when the relay creates it. */
  replicas?: number;
}

/** What the relay found of an existing stream (or created). */
export interface EnsuredStream {
  created: boolean;
  /** The stream's own replica count (num_replicas), which may differ from the setting. */
  replicas: number;
}

/** Engine seqs held by the stream, and the stream seqs they are at. */
export interface StreamBounds {
  firstEngineSeq: number;
  lastEngineSeq: number;
  firstStreamSeq: number;
  lastStreamSeq: number;
}

/**
 * A connection that retries forever (a replica or relay outlives NATS restarts), to any of the
 * seeds and the servers the cluster announces. Pings every 2 s with 2 outstanding allowed: a
 * server that is gone without closing the socket (partition, SIGSTOP, dead host) is noticed in
 * ~4-6 s, not after the client's default 2 × 2 minutes during which the connection looked up.
 */
export function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({
    servers: seedList(url),
    name,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: 2_000,
    pingInterval: 2_000,
    maxPingOut: 2,
  });
}

/** NATS_URL's seeds, as the client takes them. */
export function seedList(url: string): string[] {
  return url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * Creates the stream with `replicas` copies, or updates an existing one's retention to the
 * configured one, keeping its own replica count (changing it moves the data between servers: an
 * operator's decision, `nats stream edit --replicas`), which is returned (relay only).
 */
export async function ensureStream(jsm: JetStreamManager, s: StreamSettings): Promise<EnsuredStream> {
  const config = {
    name: s.stream,
    subjects: [s.subject],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(s.maxAgeS * 1000),
    max_bytes: s.maxBytes,
    // Dedupe of a message id published twice (two relays, or a retry after a lost ack) within this window;
    // the expected-last-id check covers what is older.
    duplicate_window: nanos(120_000),
  };
  let existing;
  try {
    existing = await jsm.streams.info(s.stream);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    const info = await jsm.streams.add({ ...config, num_replicas: s.replicas ?? 1 });
    return { created: true, replicas: info.config.num_replicas };
  }
  const info = await jsm.streams.update(s.stream, { ...config, num_replicas: existing.config.num_replicas });
  return { created: false, replicas: info.config.num_replicas };
}

/**
 * The stream's last message: its stream seq (also when the stream is empty after a purge: new
 * messages continue after it) and its engine seq (null when empty). What the relay's publishes are
 * conditioned on (Nats-Expected-Last-Sequence).
 */
export async function streamTail(jsm: JetStreamManager, stream: string): Promise<{ lastStreamSeq: number; lastEngineSeq: number | null }> {
  const state = (await jsm.streams.info(stream)).state;
  if (state.messages === 0) return { lastStreamSeq: state.last_seq, lastEngineSeq: null };
  return { lastStreamSeq: state.last_seq, lastEngineSeq: await engineSeqAt(jsm, stream, state.last_seq) };
}

export function isNotFound(err: unknown): boolean {
  const e = err as { code?: string; api_error?: { err_code?: number }; message?: string };
  return e?.code === '404' || e?.api_error?.err_code === 10059 || e?.api_error?.err_code === 10037 || /not found|no message found/i.test(e?.message ?? '');
}

async function engineSeqAt(jsm: JetStreamManager, stream: string, seq: number): Promise<number> {
  const m = await jsm.streams.getMessage(stream, { seq });
  const id = m.header?.get('Nats-Msg-Id');
  const n = Number(id);
  if (!Number.isSafeInteger(n)) throw new Error(`stream message ${seq} has no engine seq as its id`);
  return n;
}

/** null when the stream holds nothing (or does not exist yet). */
export async function streamBounds(jsm: JetStreamManager, stream: string): Promise<StreamBounds | null> {
  let state;
  try {
    state = (await jsm.streams.info(stream)).state;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
  if (state.messages === 0) return null;
  const [firstEngineSeq, lastEngineSeq] = await Promise.all([engineSeqAt(jsm, stream, state.first_seq), engineSeqAt(jsm, stream, state.last_seq)]);
  return { firstEngineSeq, lastEngineSeq, firstStreamSeq: state.first_seq, lastStreamSeq: state.last_seq };
}

/**
 * The stream seq of the first message whose engine seq is >= `engineSeq` (binary search: stream
 * order is engine order). null when every message is older.
 */
export async function streamSeqFor(jsm: JetStreamManager, stream: string, engineSeq: number, bounds: StreamBounds): Promise<number | null> {
  if (engineSeq > bounds.lastEngineSeq) return null;
  if (engineSeq <= bounds.firstEngineSeq) return bounds.firstStreamSeq;
  // Contiguous stream: a direct guess is right unless the history was replaced in between.
  const guess = bounds.firstStreamSeq + (engineSeq - bounds.firstEngineSeq);
  if (guess <= bounds.lastStreamSeq && (await engineSeqAt(jsm, stream, guess).catch(() => -1)) === engineSeq) return guess;
  let lo = bounds.firstStreamSeq;
  let hi = bounds.lastStreamSeq;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    let at: number;
    try {
      at = await engineSeqAt(jsm, stream, mid);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      lo = mid + 1; // removed by retention meanwhile
      continue;
    }
    if (at < engineSeq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
