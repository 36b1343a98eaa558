// The proof pages of a verification fetched and hashed off the page's main thread (ADR 0385).
//
// verifyHistory spent most of a first verification's main-thread time on work that needs only a
// page's bytes: reading each page's body out of the network (about 45 ms of a 6.6 MB page in
// Chromium) and scanning and hashing every event's leaf from those bytes (about 70 ms). A worker
// does both for the page it is asked for and hands back the bytes and the scan (where each proof
// is, and the leaves) by transfer (no copy); the main thread parses and checks a proof at a time
// (each batch's tree from the worker's leaves, ADR 0386) while the worker reads and hashes the next
// page. That split keeps the two threads about equally busy: a worker that also decoded the text
// and computed the trees left the main thread waiting and made the first verification slower
// (ADR 0385). The worker's scan is the one scanPage gives on the main thread, from the same bytes,
// so a verdict is the same either way; what the main thread parses is those very bytes.
//
// Both ends speak over anything with postMessage and a 'message' event: a Worker and its global
// scope in a browser, the two ports of a MessageChannel anywhere.
import type { SendRequest } from '../transport.js';
import { scanPage, type PageScan } from './page-scan.js';
import { loadSha256 } from './sha256-sync.js';

/**
 * The protocol a verification worker speaks: asked `{ hello: true }`, it answers `{ protocol }`.
 * Asked rather than announced, since a Worker drops what it posts before anyone listens (a worker
 * made long before the client's first verification). /2: a page's answer carries its scan (ADR
 * 0386); a worker of /1 (a script cached from before) is not used, its pages left to the main thread.
 */
export const VERIFY_WORKER_PROTOCOL = 'gateway-verify-worker/2';

export interface PageRequestMessage {
  id: number;
  request: SendRequest;
}

export type PageReplyMessage =
  | { id: number; status: number; bytes: Uint8Array; scan: PageScan | null }
  | { id: number; error: string };

/** What a worker's global scope (or a port) offers: posting with transfer, and 'message' events. */
export interface MessageEndpoint {
  postMessage(message: unknown, transfer: Transferable[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
  start?(): void;
}

/** One page request answered: the fetch, and for a 200 the scan of its bytes (its parts and leaves). */
export async function answerPageRequest({ id, request }: PageRequestMessage, fetchImpl: typeof fetch): Promise<{ reply: PageReplyMessage; transfer: Transferable[] }> {
  try {
    const res = await fetchImpl(request.url, { method: request.method, headers: request.headers, body: request.body ?? null });
    // Through a Blob: Chromium then assembles the body off this thread. Its arrayBuffer() built the
    // 6.6 MB of a page here, 65-100 ms in which no other page was hashed; read this way, the worker
    // hashes one page while the next one's body comes (a first verification of 100 000 events took
    // 1.8-2.1 s with arrayBuffer(), 1.6-1.7 s so).
    const bytes = new Uint8Array(await (await res.blob()).arrayBuffer());
    let scan: PageScan | null = null;
    if (res.status === 200) {
      await loadSha256();
      scan = scanPage(bytes);
    }
    const transfer: Transferable[] = [bytes.buffer];
    if (scan) transfer.push(scan.items.buffer, scan.counts.buffer, scan.leaves.buffer, scan.members.buffer);
    return { reply: { id, status: res.status, bytes, scan }, transfer };
  } catch (err) {
    return { reply: { id, error: err instanceof Error ? err.message : String(err) }, transfer: [] };
  }
}

/** Serves page requests on `scope` (a worker's global scope): answers each hello with the protocol and each request with its page. */
export function servePageRequests(scope: MessageEndpoint, fetchImpl: typeof fetch = globalThis.fetch.bind(globalThis)): void {
  // The WebAssembly hasher compiles while the first page is on its way.
  void loadSha256();
  scope.addEventListener('message', (event) => {
    const message = event.data as (Partial<PageRequestMessage> & { hello?: unknown }) | null;
    if (typeof message !== 'object' || message === null) return;
    if (message.hello === true) return scope.postMessage({ protocol: VERIFY_WORKER_PROTOCOL }, []);
    if (typeof message.id !== 'number' || typeof message.request !== 'object') return;
    void answerPageRequest(message as PageRequestMessage, fetchImpl).then(({ reply, transfer }) => scope.postMessage(reply, transfer));
  });
  scope.start?.();
}
