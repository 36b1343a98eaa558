// The order book part of a /v1/stream subscription (docs/stream.md "Order book deltas"): a
// connection asks for deltas by naming the kind `orderbook.delta` in `kinds`; then `depth`
// (1..MAX_VIEW_DEPTH levels per side, default 20) and `group` (`sig:2`…`sig:5` significant
// figures, `tick:<decimal>` price multiples, or `none`, the default) shape its book. Without
// `orderbook.delta` the connection gets the spec's polled `orderbook.snapshot` frames, unchanged,
// and `depth`/`group` are refused (they would silently do nothing).
import { InvalidSubscriptionError } from './errors.js';
import { parseGrouping } from '../projections/book-view.js';
import { BOOK_THROTTLES, type BookViewSpec } from './book-views.js';

export const BOOK_QUERY_PARAMETERS = ['depth', 'group', 'throttle'] as const;
/** Levels per side a view may ask for: a whole book of a busy market fits. */
export const MAX_VIEW_DEPTH = 1000;
export const DEFAULT_VIEW_DEPTH = 20;

function single(query: URLSearchParams, name: string): string | null {
  const raw = query.getAll(name);
  if (raw.length === 0) return null;
  if (raw.length > 1) throw new InvalidSubscriptionError(`query parameter "${name}" must be given once`);
  return raw[0]!;
}

/** Validates a depth/group/throttle (also used by the subscribe message). */
export function bookViewSpec(depthText: string | null, groupText: string | null, throttleText: string | null = null): BookViewSpec {
  let depth = DEFAULT_VIEW_DEPTH;
  if (depthText !== null) {
    if (!/^\d{1,4}$/.test(depthText) || Number(depthText) < 1 || Number(depthText) > MAX_VIEW_DEPTH) {
      throw new InvalidSubscriptionError(`"depth" must be an integer number of levels from 1 to ${MAX_VIEW_DEPTH}`);
    }
    depth = Number(depthText);
  }
  const grouping = groupText === null ? { kind: 'none' as const } : parseGrouping(groupText);
  if (!grouping) {
    throw new InvalidSubscriptionError('"group" must be sig:<2..5> (significant figures), tick:<positive decimal> (price multiple) or none');
  }
  if (throttleText === null || throttleText === '0') return { depth, grouping };
  const throttleMs = Number(throttleText);
  if (!(BOOK_THROTTLES as readonly number[]).includes(throttleMs) || String(throttleMs) !== throttleText) {
    throw new InvalidSubscriptionError(`"throttle" must be ${BOOK_THROTTLES.join(' or ')} (ms between conflated deltas) or 0`);
  }
  return { depth, grouping, throttleMs };
}

/** The book view asked for, or null for a connection that takes the spec's polled snapshots. */
export function parseBookView(query: URLSearchParams, kinds: readonly string[] | null): BookViewSpec | null {
  const depthText = single(query, 'depth');
  const groupText = single(query, 'group');
  const throttleText = single(query, 'throttle');
  if (!kinds?.includes('orderbook.delta')) {
    if (depthText !== null || groupText !== null || throttleText !== null) {
      throw new InvalidSubscriptionError('"depth", "group" and "throttle" shape the order book deltas: add orderbook.delta to "kinds"');
    }
    return null;
  }
  return bookViewSpec(depthText, groupText, throttleText);
}
