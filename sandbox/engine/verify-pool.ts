/**
 * ed25519 verification of signed requests, in one of three places:
 *   - VerifyPool: dedicated worker threads, batched (per event-loop turn) — the default, with
 *     libsodium (sodium-native) in the workers when it loads, node:crypto otherwise;
 *   - SodiumVerifier: libsodium inline on the main thread;
 *   - ThreadPoolVerifier: async node:crypto (OpenSSL) `verify` on libuv's thread pool.
 *
 * One verification is the largest CPU cost of an order request (libsodium ~62 µs, OpenSSL
 * ~107–180 µs on the 2-core bench VM), so keeping it off the main thread lets the main thread keep
 * parsing, matching and streaming while the workers verify.
 */
import { verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { ed25519PublicKey } from './sessions.js';
import type { SodiumLib } from './sodium.js';

/*
 * A batch travels as one latin1 string (cheap to clone): per job
 * <64 hex key><128 hex sig><message length in decimal>:<message bytes as latin1>.
 * The worker answers with one Uint8Array of 0/1 verdicts. workerData.sodiumPath, when set, is the
 * absolute path of sodium-native (resolved by the main thread); the worker then verifies with
 * libsodium, else with node:crypto.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
const PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
let sodium = null;
if (workerData && workerData.sodiumPath) {
  try { sodium = require(workerData.sodiumPath); } catch { sodium = null; }
}
const keys = new Map();
function keyFor(keyHex) {
  let k = keys.get(keyHex);
  if (!k) {
    const raw = Buffer.from(keyHex, 'hex');
    if (raw.length !== 32) throw new Error('bad key');
    k = sodium ? raw : createPublicKey({ key: Buffer.concat([PREFIX, raw]), format: 'der', type: 'spki' });
    if (keys.size > 10000) keys.clear();
    keys.set(keyHex, k);
  }
  return k;
}
parentPort.on('message', (m) => {
  const s = m.data;
  const out = new Uint8Array(m.count);
  let p = 0;
  for (let i = 0; i < m.count; i++) {
    const keyHex = s.slice(p, p + 64);
    const sig = s.slice(p + 64, p + 192);
    const colon = s.indexOf(':', p + 192);
    const len = Number(s.slice(p + 192, colon));
    const msg = Buffer.from(s.slice(colon + 1, colon + 1 + len), 'latin1');
    p = colon + 1 + len;
    try {
      const k = keyFor(keyHex);
      const sigBuf = Buffer.from(sig, 'hex');
      if (sodium) out[i] = sigBuf.length === 64 && sodium.crypto_sign_verify_detached(sigBuf, msg, k) ? 1 : 0;
      else out[i] = verify(null, msg, k, sigBuf) ? 1 : 0;
    } catch {
      out[i] = 0;
    }
  }
  parentPort.postMessage(out);
});
`;

/**
 * Largest batch in one message. Measured on the 2-core bench VM (2026-11-22, libsodium, 2 workers,
 * interleaved runs): chunks of 8 gave ~25 % more orders/s than one batch per event-loop turn
 * handed only to an idle worker (3443 / 3511 vs 2725 / 2809 req/s) at no more CPU per order;
 * chunks of 2 or 4 cost more main-thread CPU (more messages), 12 or 16 were no better.
 */
const MAX_BATCH = 8;

interface Slot {
  worker: Worker;
  /** Resolvers of the batches sent to this worker, oldest first. */
  inflight: Array<Array<(ok: boolean) => void>>;
  load: number;
}

export class VerifyPool {
  private readonly slots: Slot[] = [];
  private queue: string[] = [];
  private waiting: Array<(ok: boolean) => void> = [];
  private scheduled = false;
  private closed = false;

  /** `sodiumPath`: absolute path of sodium-native for the workers to load; unset: node:crypto. */
  constructor(size: number, readonly sodiumPath?: string) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { sodiumPath: sodiumPath ?? null } });
      worker.unref();
      const slot: Slot = { worker, inflight: [], load: 0 };
      worker.on('message', (out: Uint8Array) => {
        const resolvers = slot.inflight.shift() ?? [];
        slot.load -= resolvers.length;
        for (let j = 0; j < resolvers.length; j++) resolvers[j]!(out[j] === 1);
        if (this.queue.length > 0) this.flush(); // send what accumulated without waiting for the next turn
      });
      worker.on('error', (err) => {
        // Fail everything pending on this worker closed; never accept on error.
        for (const batch of slot.inflight.splice(0)) for (const r of batch) r(false);
        slot.load = 0;
        if (!this.closed) console.error('engine: verify worker failed', err);
      });
      worker.on('exit', () => {
        const i = this.slots.indexOf(slot);
        if (i >= 0) this.slots.splice(i, 1);
        for (const batch of slot.inflight.splice(0)) for (const r of batch) r(false);
        if (this.slots.length === 0) this.closed = true; // nothing can verify: fail closed (401)
        if (this.queue.length > 0) this.flush();
      });
      this.slots.push(slot);
    }
  }

  get size(): number {
    return this.slots.length;
  }

  verify(publicKeyHex: string, message: Buffer, sigHex: string): Promise<boolean> {
    return new Promise((resolve) => {
      if (publicKeyHex.length !== 64 || sigHex.length !== 128) {
        resolve(false);
        return;
      }
      this.queue.push(`${publicKeyHex}${sigHex}${message.length}:${message.toString('latin1')}`);
      this.waiting.push(resolve);
      if (this.queue.length >= MAX_BATCH) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    const jobs = this.queue;
    const resolvers = this.waiting;
    this.queue = [];
    this.waiting = [];
    if (this.closed) {
      for (const r of resolvers) r(false);
      return;
    }
    if (this.slots.length === 0) {
      for (const r of resolvers) r(false);
      return;
    }
    // Chunks of at most MAX_BATCH jobs, each to the least-loaded worker, busy or not: a worker
    // answers its first chunk after a few verifications, so the main thread gets verdicts back (and
    // answers, and reads new requests) while the workers go on, instead of the two taking turns over
    // one batch of every request read in a turn.
    for (let from = 0; from < jobs.length; from += MAX_BATCH) {
      const to = Math.min(jobs.length, from + MAX_BATCH);
      let slot = this.slots[0]!;
      for (const s of this.slots) if (s.load < slot.load) slot = s;
      const part = from === 0 && to === jobs.length ? resolvers : resolvers.slice(from, to);
      slot.inflight.push(part);
      slot.load += part.length;
      slot.worker.postMessage({ count: to - from, data: (part === resolvers ? jobs : jobs.slice(from, to)).join('') });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    for (const s of this.slots) for (const batch of s.inflight.splice(0)) for (const r of batch) r(false);
  }
}

/**
 * ed25519 verification on libuv's thread pool (`crypto.verify` with a callback): each check is
 * dispatched at once, with no batching and no message cloning; the KeyObject of each session key is
 * cached.
 */
export class ThreadPoolVerifier {
  private readonly keys = new Map<string, KeyObject>();

  verify(publicKeyHex: string, message: Buffer, sigHex: string): Promise<boolean> {
    return new Promise((resolve) => {
      if (publicKeyHex.length !== 64 || sigHex.length !== 128) {
        resolve(false);
        return;
      }
      let key = this.keys.get(publicKeyHex);
      try {
        if (!key) {
          key = ed25519PublicKey(publicKeyHex);
          if (this.keys.size > 100_000) this.keys.clear();
          this.keys.set(publicKeyHex, key);
        }
        cryptoVerify(null, message, key, Buffer.from(sigHex, 'hex'), (err, ok) => resolve(!err && ok === true));
      } catch {
        resolve(false);
      }
    });
  }

  /** Nothing to stop (the thread pool belongs to the process). */
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * libsodium inline on the main thread (synchronous; the answer is already settled when returned).
 * Session public keys are decoded once and cached.
 */
export class SodiumVerifier {
  private readonly keys = new Map<string, Buffer>();

  constructor(private readonly sodium: SodiumLib) {}

  verifySync(publicKeyHex: string, message: Buffer, sigHex: string): boolean {
    if (publicKeyHex.length !== 64 || sigHex.length !== 128) return false;
    try {
      let key = this.keys.get(publicKeyHex);
      if (!key) {
        key = Buffer.from(publicKeyHex, 'hex');
        if (key.length !== 32) return false;
        if (this.keys.size > 100_000) this.keys.clear();
        this.keys.set(publicKeyHex, key);
      }
      const sig = Buffer.from(sigHex, 'hex');
      return sig.length === 64 && this.sodium.crypto_sign_verify_detached(sig, message, key);
    } catch {
      return false;
    }
  }

  verify(publicKeyHex: string, message: Buffer, sigHex: string): Promise<boolean> {
    return Promise.resolve(this.verifySync(publicKeyHex, message, sigHex));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
