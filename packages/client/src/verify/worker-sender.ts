// The main thread's side of the verification worker (ADR 0385): a Sender whose pages a worker
// fetches and hashes (page-worker.ts). It never makes a verification wait on a worker that is not
// there: until the worker says which protocol it speaks the requests wait (at most `readyTimeoutMs`),
// and a worker that never says it, says another, or fails (its 'error' event: a script that did not
// load, a crash) hands every request, those on their way included, to the main thread's own sender.
// A worker given as an instance is asked its protocol at once; one given as a function is made, and
// asked, when a verification begins (`start()`) or on the first request.
import { bytesResult, type Sender, type SendRequest, type SendResult } from '../transport.js';
import { VERIFY_WORKER_PROTOCOL, type PageReplyMessage } from './page-worker.js';

/** A verification worker as the client uses it: a browser `Worker` (or a MessagePort) running `@gateway/client/verify-worker`. */
export interface VerifyWorker {
  postMessage(message: unknown, transfer: Transferable[]): void;
  addEventListener(type: 'message' | 'error' | 'messageerror', listener: (event: Event) => void): void;
  start?(): void;
}

interface Pending {
  request: SendRequest;
  resolve: (result: SendResult) => void;
  reject: (err: unknown) => void;
}

/**
 * A Sender through `worker` (or the worker `worker()` makes, made by `start()` or the first request:
 * a page that never verifies never starts one); `fallback` sends what the worker cannot.
 */
export function workerSender(worker: VerifyWorker | (() => VerifyWorker), fallback: Sender, readyTimeoutMs = 10_000): Sender & { start(): void } {
  let started = typeof worker === 'function' ? null : start(() => worker, fallback, readyTimeoutMs);
  const begin = () => (started ??= start(worker as () => VerifyWorker, fallback, readyTimeoutMs));
  const send = async (request: SendRequest): Promise<SendResult> => {
    const { ready, send } = begin();
    if (!(await ready)) return fallback(request);
    return send(request);
  };
  /** Starts the worker now (a verification that begins: it loads while the batches are listed). */
  return Object.assign(send, { start: () => void begin() });
}

function start(make: () => VerifyWorker, fallback: Sender, readyTimeoutMs: number): { ready: Promise<boolean>; send: (request: SendRequest) => Promise<SendResult> } {
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let state: 'waiting' | 'ready' | 'gone' = 'waiting';
  let worker: VerifyWorker;
  try {
    worker = make();
  } catch {
    // A page whose policy refuses workers (a Content-Security-Policy without worker-src) verifies on the main thread.
    return { ready: Promise.resolve(false), send: fallback };
  }
  let settle: (ok: boolean) => void = () => {};
  const ready = new Promise<boolean>((resolve) => (settle = resolve));

  /** The worker is not usable: what it holds goes through the main thread's sender. */
  const giveUp = (): void => {
    if (state === 'gone') return;
    state = 'gone';
    clearTimeout(timer);
    settle(false);
    for (const p of pending.values()) fallback(p.request).then(p.resolve, p.reject);
    pending.clear();
  };
  const timer = setTimeout(giveUp, readyTimeoutMs);
  // A pending timer must not keep a process (a test, a server-side render) alive.
  (timer as { unref?: () => void }).unref?.();

  worker.addEventListener('error', giveUp);
  worker.addEventListener('messageerror', giveUp);
  worker.addEventListener('message', (event) => {
    const data = (event as MessageEvent).data as (Partial<PageReplyMessage> & { protocol?: unknown }) | null;
    if (typeof data !== 'object' || data === null) return;
    if (state === 'waiting' && 'protocol' in data) {
      if (data.protocol !== VERIFY_WORKER_PROTOCOL) return giveUp();
      state = 'ready';
      clearTimeout(timer);
      return settle(true);
    }
    const p = typeof data.id === 'number' ? pending.get(data.id) : undefined;
    if (!p) return;
    pending.delete(data.id!);
    const reply = data as PageReplyMessage;
    if ('error' in reply) return p.reject(new Error(reply.error));
    p.resolve(bytesResult(reply.status, reply.bytes, reply.scan ?? null));
  });
  worker.start?.();
  worker.postMessage({ hello: true }, []);

  const send = (request: SendRequest): Promise<SendResult> => {
    if (state !== 'ready') return fallback(request);
    return new Promise<SendResult>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { request, resolve, reject });
      worker.postMessage({ id, request }, []);
    });
  };
  return { ready, send };
}
