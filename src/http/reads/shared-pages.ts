// Identical list reads share one database read (LIST_SHARED_READS, default on): requests for the
// same route with the same parameters that arrive while a read is in flight share the NEXT read,
// which starts when the current one settles, and its JSON body. No request is answered from a read
// that started before it arrived, so sharing never makes an answer older than reading alone
// (src/engine/shared-read.ts, which the order book uses the same way). Guards run per request
// before the handler, so sharing the body of a party's page never skips an authorization.
import { SharedRead } from '../../engine/shared-read.js';

/** Wraps a page read so identical concurrent calls share one; `params` must be plain JSON values. */
export function sharedPages<P, T>(enabled: boolean, read: (params: P) => Promise<T>): (params: P) => Promise<T> {
  if (!enabled) return read;
  const shared = new SharedRead<T>((key) => read(JSON.parse(key) as P));
  return (params) => shared.read(JSON.stringify(params));
}
