/**
 * ed25519 verification off the main thread: ThreadPoolVerifier (the default, libuv's thread pool)
 * or VerifyPool (dedicated worker threads).
 *
 * VerifyPool: ed25519 verification on worker threads. One verification costs far more CPU than the rest of an
 * order request, so signed-request checks are batched (per event-loop turn) and spread over a few
 * workers while the main thread keeps parsing, matching and streaming.
 */
import { verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { ed25519PublicKey } from './sessions.js';

/*
 * A batch travels as one latin1 string (cheap to clone): per job
 * <64 hex key><128 hex sig><message length in decimal>:<message bytes as latin1>.
 * The worker answers with one Uint8Array of 0/1 verdicts.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createPublicKey, verify } = require('node:crypto');
const PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const keys = new Map();
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
      let k = keys.get(keyHex);
      if (!k) {
        k = createPublicKey({ key: Buffer.concat([PREFIX, Buffer.from(keyHex, 'hex')]), format: 'der', type: 'spki' });
        if (keys.size > 10000) keys.clear();
        keys.set(keyHex, k);
      }
      out[i] = verify(null, msg, k, Buffer.from(sig, 'hex')) ? 1 : 0;
    } catch {
      out[i] = 0;
    }
  }
  parentPort.postMessage(out);
});
`;


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

  constructor(size: number) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true });
      worker.unref();
      const slot: Slot = { worker, inflight: [], load: 0 };
      worker.on('message', (out: Uint8Array) => {
        const resolvers = slot.inflight.shift() ?? [];
        slot.load -= resolvers.length;
        for (let j = 0; j < resolvers.length; j++) resolvers[j]!(out[j] === 1);
        if (this.queue.length > 0) this.flush(); // the worker is free: hand it what accumulated
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
      if (this.queue.length >= 256) this.flush();
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
    let slot = this.slots[0]!;
    for (const s of this.slots) if (s.load < slot.load) slot = s;
    if (slot.load > 0 && jobs.length < 256) {
      // Every worker is busy: keep accumulating; the next worker to answer takes the whole batch.
      // Bigger batches mean fewer cross-thread messages per verification.
      this.queue = jobs;
      this.waiting = resolvers;
      return;
    }
    slot.inflight.push(resolvers);
    slot.load += resolvers.length;
    slot.worker.postMessage({ count: jobs.length, data: jobs.join('') });
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
