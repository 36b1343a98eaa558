// The proof pages of a verification fetched and hashed off the page's main thread (ADR 0385).
//
// verifyHistory spent most of a first verification's main-thread time on work that does not need
// to be done there: reading each page's body out of the network (about 45 ms of a 6.6 MB page in
// Chromium), hashing every event's leaf from those bytes and each batch's tree from its leaves
// (about 80 ms), and decoding the bytes to text (about 11 ms). A worker does all of it for the
// page it is asked for and hands back the bytes (by transfer, no copy), their text, and each
// item's event count and tree root; the main thread only parses and checks, while the worker reads
// and hashes the next page. The worker computes exactly what the main thread would (leavesOfPage,
// treeRootOf, TextDecoder), from the same bytes, so a verdict is the same either way, and what the
// main thread parses is the text of those very bytes.
//
// Both ends speak over anything with postMessage and a 'message' event: a Worker and its global
// scope in a browser, the two ports of a MessageChannel anywhere.
import type { SendRequest } from '../transport.js';
import { leavesOfPage } from './page-leaves.js';
import { loadSha256, treeRootOf } from './sha256-sync.js';

/**
 * The protocol a verification worker speaks: asked `{ hello: true }`, it answers `{ protocol }`.
 * Asked rather than announced, since a Worker drops what it posts before anyone listens (a worker
 * made long before the client's first verification).
 */
export const VERIFY_WORKER_PROTOCOL = 'gateway-verify-worker/1';

export interface PageRequestMessage {
  id: number;
  request: SendRequest;
}

/** What was hashed of one item's events: how many, and the root of their leaves' tree (null for none). */
export interface ItemHashes {
  count: number;
  root: Uint8Array | null;
}

/** Each item's event count (-1: the item has no events array) and tree root (32 bytes each, zeros where there is none). */
export interface PackedHashes {
  counts: Int32Array;
  roots: Uint8Array;
}

export type PageReplyMessage =
  | { id: number; status: number; bytes: Uint8Array; text: string; hashes: PackedHashes | null }
  | { id: number; error: string };

/** What a worker's global scope (or a port) offers: posting with transfer, and 'message' events. */
export interface MessageEndpoint {
  postMessage(message: unknown, transfer: Transferable[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
  start?(): void;
}

/** Each item's hashes from its leaves (leavesOfPage's), the tree root computed as verifyUserBatch computes it. */
export function packHashes(leaves: ReadonlyArray<Uint8Array | null>): PackedHashes {
  const counts = new Int32Array(leaves.length);
  const roots = new Uint8Array(leaves.length * 32);
  leaves.forEach((l, i) => {
    counts[i] = l === null ? -1 : l.length / 32;
    // treeRootOf overwrites the leaves it is given: they are not used again.
    const root = l === null ? null : treeRootOf(l, l.length / 32);
    if (root) roots.set(root, i * 32);
  });
  return { counts, roots };
}

/** The hashes of each item (views into `roots`, no copy), or null for a packing that does not add up. */
export function unpackHashes({ counts, roots }: PackedHashes): Array<ItemHashes | null> | null {
  if (roots.length !== counts.length * 32) return null;
  return Array.from(counts, (count, i) => (count < 0 ? null : { count, root: count === 0 ? null : roots.subarray(i * 32, i * 32 + 32) }));
}

const utf8 = new TextDecoder();

/** One page request answered: the fetch, its text, and for a 200 its items' hashes from its bytes. */
export async function answerPageRequest({ id, request }: PageRequestMessage, fetchImpl: typeof fetch): Promise<{ reply: PageReplyMessage; transfer: Transferable[] }> {
  try {
    const res = await fetchImpl(request.url, { method: request.method, headers: request.headers, body: request.body ?? null });
    // Through a Blob: Chromium then assembles the body off this thread. Its arrayBuffer() built the
    // 6.6 MB of a page here, 65-100 ms in which no other page was hashed; read this way, the worker
    // hashes one page while the next one's body comes (a first verification of 100 000 events took
    // 1.8-2.1 s with arrayBuffer(), 1.6-1.7 s so).
    const bytes = new Uint8Array(await (await res.blob()).arrayBuffer());
    let hashes: PackedHashes | null = null;
    if (res.status === 200) {
      await loadSha256();
      const leaves = leavesOfPage(bytes);
      hashes = leaves === null ? null : packHashes(leaves);
    }
    // The text as the main thread would decode it (transport.ts: UTF-8, malformed sequences
    // replaced); a string crosses to it as a copy, cheaper there than decoding.
    const text = utf8.decode(bytes);
    const transfer: Transferable[] = [bytes.buffer];
    if (hashes) transfer.push(hashes.counts.buffer, hashes.roots.buffer);
    return { reply: { id, status: res.status, bytes, text, hashes }, transfer };
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
