// Optional: keep a party and its session across page reloads. Keys stay non-extractable
// CryptoKeys: IndexedDB stores them by structured clone, so the page can sign after a reload but
// no script can ever read the key bytes. Node has no IndexedDB; `memoryStore()` (or any
// KeyValueStore) stands in.
import { generateKeyPair, signHex, type CryptoKey } from './ed25519.js';
import type { GatewayClient } from './client.js';
import { Session, type PartySigner } from './signing.js';

export interface KeyValueStore {
  get<T>(key: string): Promise<T | undefined>;
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
}

interface StoredParty {
  party: string;
  privateKey: CryptoKey;
}
interface StoredSession {
  party: string;
  sessionId: string;
  expiresAt: number;
  privateKey: CryptoKey;
}

/** A store in this process only (values structured-cloned, as IndexedDB would). */
export function memoryStore(): KeyValueStore {
  const map = new Map<string, unknown>();
  return {
    get: async <T>(key: string) => (map.has(key) ? (structuredClone(map.get(key)) as T) : undefined),
    set: async (key, value) => void map.set(key, structuredClone(value)),
    delete: async (key) => void map.delete(key),
  };
}

// The few IndexedDB shapes used here, typed locally so the file compiles without the DOM library.
interface IdbRequest {
  result: unknown;
  error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
}
interface IdbObjectStore {
  get(key: string): IdbRequest;
  put(value: unknown, key: string): IdbRequest;
  delete(key: string): IdbRequest;
}
interface IdbTransaction {
  objectStore(name: string): IdbObjectStore;
  error: unknown;
  oncomplete: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
}
interface IdbDatabase {
  transaction(store: string, mode: 'readonly' | 'readwrite'): IdbTransaction;
  createObjectStore(name: string): unknown;
}
interface IdbOpenRequest extends IdbRequest {
  result: IdbDatabase;
  onupgradeneeded: (() => void) | null;
}
interface IdbFactory {
  open(name: string, version: number): IdbOpenRequest;
}

/** An IndexedDB object store (browsers). One database per name, one object store `keys`. */
export function indexedDbStore(name = 'gateway-client'): KeyValueStore {
  const idb = (globalThis as { indexedDB?: IdbFactory }).indexedDB;
  if (!idb) throw new Error('indexedDB is not available here: use memoryStore() or another KeyValueStore');
  const db = new Promise<IdbDatabase>((resolve, reject) => {
    const open = idb.open(name, 1);
    open.onupgradeneeded = () => open.result.createObjectStore('keys');
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const run = async <T>(mode: 'readonly' | 'readwrite', act: (store: IdbObjectStore) => IdbRequest): Promise<T> => {
    const tx = (await db).transaction('keys', mode);
    const request = act(tx.objectStore('keys'));
    return new Promise<T>((resolve, reject) => {
      tx.oncomplete = () => resolve(request.result as T);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    });
  };
  return {
    get: (key) => run('readonly', (s) => s.get(key)),
    set: async (key, value) => void (await run('readwrite', (s) => s.put(value, key))),
    delete: async (key) => void (await run('readwrite', (s) => s.delete(key))),
  };
}

/** The party kept under `hint` in the store, or a new one (non-extractable key) saved there. */
export async function loadOrCreateParty(store: KeyValueStore, hint: string): Promise<PartySigner> {
  if (!/^[a-z0-9][a-z0-9_-]{0,47}$/.test(hint)) throw new TypeError('party hint must match [a-z0-9][a-z0-9_-]{0,47}');
  let stored = await store.get<StoredParty>(`party:${hint}`);
  if (!stored) {
    const keys = await generateKeyPair();
    stored = { party: `${hint}::${keys.publicKeyHex}`, privateKey: keys.privateKey };
    await store.set(`party:${hint}`, stored);
  }
  const { party, privateKey } = stored;
  return { party, sign: (message) => signHex(privateKey, message) };
}

export async function saveSession(store: KeyValueStore, session: Session): Promise<void> {
  const value: StoredSession = { party: session.party, sessionId: session.sessionId, expiresAt: session.expiresAt, privateKey: session.privateKey };
  await store.set(`session:${session.party}`, value);
}

/** The saved session of `party`, set on the client, when it has not expired (by the client's clock). */
export async function restoreSession(client: GatewayClient, store: KeyValueStore, party: string): Promise<Session | null> {
  const s = await store.get<StoredSession>(`session:${party}`);
  if (!s) return null;
  const session = new Session(s.party, s.sessionId, s.expiresAt, s.privateKey, () => client.now());
  if (session.expired) {
    await store.delete(`session:${party}`);
    return null;
  }
  client.session = session;
  return session;
}

/**
 * Party and session that survive reloads: restores both from the store (or makes them), and
 * installs a session-expiry hook that signs a new session with the party and saves it.
 */
export async function keepPartySession(client: GatewayClient, store: KeyValueStore, hint: string, lifetimeMs = 60 * 60 * 1000): Promise<{ signer: PartySigner; session: Session }> {
  const signer = await loadOrCreateParty(store, hint);
  const fresh = async (): Promise<Session> => {
    const answer = await client.createSession(signer, lifetimeMs);
    if (!answer.ok || !answer.session) throw new Error(`session refused: ${answer.ok ? 'no session' : answer.code}`);
    await saveSession(store, answer.session);
    return answer.session;
  };
  client.transport.renewSession = async () => fresh();
  const session = (await restoreSession(client, store, signer.party)) ?? (await fresh());
  return { signer, session };
}
