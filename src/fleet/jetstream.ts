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
  /** The stream answers direct gets (`allow_direct`). */
  allowDirect: boolean;
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
    // Any server holding the stream answers a message get by seq, without the meta leader: what a
    // replica reads while the cluster elects one (src/fleet/jetstream-source.ts).
    allow_direct: true,
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

/** A stream message as a direct get returns it. */
export interface DirectMessage {
  seq: number;
  subject: string;
  data: Uint8Array;
  /** Its `Nats-Msg-Id` (the engine seq), when it has one. */
  msgId?: string | null;
}

/**
 * The stream's message at stream seq `seq` by a direct get (`$JS.API.DIRECT.GET.<stream>`, the
 * stream's `allow_direct`): answered by any server holding the stream, with neither the meta leader
 * nor the JetStream API involved. null when the answering server does not hold it (not yet
 * replicated there, or not published yet). Throws on a timeout, which is also what a stream that
 * does not allow direct gets gives (the API's catch-all takes the request and never answers).
 * (The legacy client's direct API is not in its public types.)
 */
export async function directGet(nc: NatsConnection, stream: string, seq: number, timeoutMs: number): Promise<DirectMessage | null> {
  return direct(nc, `$JS.API.DIRECT.GET.${stream}`, new TextEncoder().encode(JSON.stringify({ seq })), timeoutMs, `${stream} seq ${seq}`);
}

/** The stream's last message on `subject` by a direct get, as `directGet` (null: the stream holds none). */
export function directLast(nc: NatsConnection, stream: string, subject: string, timeoutMs: number): Promise<DirectMessage | null> {
  return direct(nc, `$JS.API.DIRECT.GET.${stream}.${subject}`, new Uint8Array(0), timeoutMs, `${stream} last of ${subject}`);
}

async function direct(nc: NatsConnection, api: string, body: Uint8Array, timeoutMs: number, what: string): Promise<DirectMessage | null> {
  const r = await nc.request(api, body, { timeout: timeoutMs });
  const code = r.headers?.code ?? 0;
  if (code === 404) return null;
  if (code !== 0 && (code < 200 || code > 299)) throw new Error(`direct get of ${what}: ${code} ${r.headers?.description ?? ''}`);
  const seq = Number(r.headers?.get('Nats-Sequence'));
  if (!Number.isSafeInteger(seq) || seq <= 0) throw new Error(`direct get of ${what}: no stream seq in the answer`);
  return { seq, subject: r.headers?.get('Nats-Subject') ?? '', data: r.data, msgId: r.headers?.get('Nats-Msg-Id') || null };
}

/**
 * `streamTail`, and when the stream info is refused (a cluster without a meta leader answers it
 * 503 for as long as its election lasts: 19 s after the stream's own, measured on 2.9.10), the
 * stream's last message by a direct get, which the stream's servers answer meanwhile. That answer
 * may come from a follower a few messages behind: the relay's publishes are conditioned on the
 * stream's last seq, so a stale tail costs a refusal and a realignment, never a wrong write.
 */
export async function streamTailAnyhow(nc: NatsConnection, jsm: JetStreamManager, stream: string, subject: string): Promise<{ lastStreamSeq: number; lastEngineSeq: number | null }> {
  try {
    return await streamTail(jsm, stream);
  } catch (err) {
    if (isNotFound(err)) throw err;
    const m = await directLast(nc, stream, subject, 1_000).catch(() => null);
    const engineSeq = Number(m?.msgId);
    if (!m || !Number.isSafeInteger(engineSeq)) throw err;
    return { lastStreamSeq: m.seq, lastEngineSeq: engineSeq };
  }
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
  let info;
  try {
    info = await jsm.streams.info(stream);
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
  const state = info.state;
  if (state.messages === 0) return null;
  const [firstEngineSeq, lastEngineSeq] = await Promise.all([engineSeqAt(jsm, stream, state.first_seq), engineSeqAt(jsm, stream, state.last_seq)]);
  return { firstEngineSeq, lastEngineSeq, firstStreamSeq: state.first_seq, lastStreamSeq: state.last_seq, allowDirect: info.config.allow_direct === true };
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
