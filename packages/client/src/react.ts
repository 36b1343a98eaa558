// `@gateway/client/react`: React hooks over ONE stream connection (docs/client.md "React"). A
// <GatewayProvider client={…}> opens one LiveConnection for the tree; every hook below is a watch on
// it (its filters are the union of the mounted hooks', each frame handed to the hooks it matches),
// so a screen of books, tapes, charts and account panels holds one socket. Each hook starts from REST
// where the stream's snapshot may not cover it (trades, candles, the account) and keys what it merges
// (trades by seq, bars by open time, accounts by asOfSeq), so the two sources meet without doubles.
// React is an optional peer dependency: only this entry imports it.
import { createContext, createElement, useContext, useEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode } from 'react';
import { LiveConnection, type LiveConnectionOptions } from './connection.js';
import { OrderBookFeed, type BookView } from './book-feed.js';
import type { BookLevel } from './order-book.js';
import { toTrade } from './trades.js';
import { UserFillsStore, UserOrdersStore, type OrderUpdate, type UserFill } from './user-channels.js';
import type { GatewayClient } from './client.js';
import type { StreamState } from './stream.js';
import type { Account } from './account.js';
import type { Candle, CandleInterval, Trade } from './types.js';

interface GatewayContextValue {
  client: GatewayClient;
  live: LiveConnection;
  state: { get(): StreamState; subscribe(listener: () => void): () => void };
}

const GatewayContext = createContext<GatewayContextValue | null>(null);

export interface GatewayProviderProps {
  client: GatewayClient;
  /** Options of the one connection (WebSocket class, heartbeat, reconnect, error hooks). */
  connection?: Omit<LiveConnectionOptions, 'client' | 'onState'>;
  children?: ReactNode;
}

/** One client and one stream connection for the tree below; the socket closes when it unmounts. */
export function GatewayProvider({ client, connection, children }: GatewayProviderProps): ReactNode {
  const value = useMemo(() => {
    let current: StreamState = 'stopped';
    const listeners = new Set<() => void>();
    const live = new LiveConnection({
      ...connection,
      client,
      onState: (s) => {
        current = s;
        for (const l of listeners) l();
      },
    });
    const state = {
      get: () => current,
      subscribe: (l: () => void) => {
        listeners.add(l);
        return () => listeners.delete(l);
      },
    };
    return { client, live, state };
    // The connection belongs to the client: another client, another connection (the options are read once).
  }, [client]);
  useEffect(() => {
    value.live.start();
    return () => value.live.stop();
  }, [value]);
  return createElement(GatewayContext.Provider, { value }, children);
}

/** The provider's client and connection (for orders over the socket: `live.client?.placeOrder`). */
export function useGateway(): { client: GatewayClient; live: LiveConnection } {
  const value = useContext(GatewayContext);
  if (!value) throw new Error('@gateway/client/react: a hook was used outside <GatewayProvider client={…}>');
  return value;
}

/** The connection's state: `connecting`, `live`, `backfilling`, `waiting`, `refused`, `stopped`. */
export function useStreamState(): StreamState {
  const value = useContext(GatewayContext);
  if (!value) throw new Error('@gateway/client/react: useStreamState outside <GatewayProvider>');
  return useSyncExternalStore(value.state.subscribe, value.state.get, value.state.get);
}

export interface BookState {
  bids: BookLevel[];
  asks: BookLevel[];
  /** null until the first snapshot of the view. */
  bookSeq: number | null;
  resyncs: number;
}

/** One market's book kept from deltas (checksummed; resynced on the same socket), at `view`. */
export function useOrderBook(market: string, view: BookView = {}): BookState {
  const { client, live } = useGateway();
  const [book, setBook] = useState<BookState>({ bids: [], asks: [], bookSeq: null, resyncs: 0 });
  const depth = view.depth;
  const group = view.group;
  useEffect(() => {
    setBook({ bids: [], asks: [], bookSeq: null, resyncs: 0 });
    const feed: OrderBookFeed = new OrderBookFeed({
      client,
      connection: live,
      market,
      view: { ...(depth !== undefined ? { depth } : {}), ...(group !== undefined ? { group } : {}) },
      onBook: (b) => setBook({ bids: b.bids, asks: b.asks, bookSeq: b.bookSeq, resyncs: feed.resyncs }),
    });
    feed.start();
    return () => feed.stop();
  }, [client, live, market, depth, group]);
  return book;
}

/** The market's trades, newest first (REST history, then live frames in the same `Trade` shape). */
export function useTrades(market: string, limit = 50): Trade[] {
  const { client, live } = useGateway();
  const [trades, setTrades] = useState<Trade[]>([]);
  useEffect(() => {
    const bySeq = new Map<number, Trade>();
    let alive = true;
    const publish = () => alive && setTrades([...bySeq.values()].sort((a, b) => b.seq - a.seq).slice(0, limit));
    const add = (t: Trade) => {
      bySeq.set(t.seq, t);
      if (bySeq.size > limit * 2) for (const old of [...bySeq.keys()].sort((a, b) => a - b).slice(0, bySeq.size - limit)) bySeq.delete(old);
    };
    setTrades([]);
    const watch = live.watch(
      { kinds: ['trade'], markets: [market] },
      {
        onMessage: (m) => {
          if (m.source === 'live' && m.frame.kind === 'trade' && m.frame.market === market) {
            add(toTrade(m.frame));
            publish();
          }
        },
      },
    );
    void client.listTrades({ market, limit }).then((page) => {
      for (const t of page.items) add(t);
      publish();
    }, () => {});
    return () => {
      alive = false;
      watch.close();
    };
  }, [client, live, market, limit]);
  return trades;
}

/**
 * The market's open interest (base units, a 10-place decimal string, as GET /v1/markets
 * `openInterest`), live from `open_interest.update`: the value on subscribe, then after each batch
 * that changed it; null until the first frame (or when the gateway has no mirror to seed it from).
 */
export function useOpenInterest(market: string): string | null {
  const { live } = useGateway();
  const [value, setValue] = useState<string | null>(null);
  useEffect(() => {
    let seq = -1;
    setValue(null);
    const watch = live.watch(
      { kinds: ['open_interest.update'], markets: [market] },
      {
        onMessage: (m) => {
          if (m.source !== 'live' || m.frame.kind !== 'open_interest.update' || m.frame.market !== market || m.frame.seq < seq) return;
          seq = m.frame.seq;
          setValue(m.frame.payload.openInterest);
        },
      },
    );
    return () => watch.close();
  }, [live, market]);
  return value;
}

/** The market's bars at `interval`, oldest first: REST history, then live `candle.*` frames by open time. */
export function useCandles(market: string, interval: CandleInterval, limit = 300): Candle[] {
  const { client, live } = useGateway();
  const [bars, setBars] = useState<Candle[]>([]);
  useEffect(() => {
    const byOpen = new Map<string, Candle>();
    let alive = true;
    const publish = () => alive && setBars([...byOpen.values()].sort((a, b) => (a.openTs < b.openTs ? -1 : 1)).slice(-limit));
    setBars([]);
    const watch = live.watch(
      { kinds: ['candle.update', 'candle.close'], markets: [market], intervals: [interval] },
      {
        onMessage: (m) => {
          if (m.source !== 'live' || (m.frame.kind !== 'candle.update' && m.frame.kind !== 'candle.close')) return;
          if (m.frame.market !== market || m.frame.interval !== interval) return;
          byOpen.set(m.frame.payload.openTs, { market, interval, ...m.frame.payload, closed: m.frame.kind === 'candle.close' });
          publish();
        },
      },
    );
    void client.listCandles({ market, interval, limit }).then((page) => {
      // A live bar already held is newer than the REST copy of the same bucket.
      for (const c of page.items) if (!byOpen.has(c.openTs)) byOpen.set(c.openTs, c);
      publish();
    }, () => {});
    return () => {
      alive = false;
      watch.close();
    };
  }, [client, live, market, interval, limit]);
  return bars;
}

/** The party's account (GET /v1/users/:party/account, then `account.update`), the newest by asOfSeq; null before the first. */
export function useAccount(party: string | null): Account | null {
  const { client, live } = useGateway();
  const [account, setAccount] = useState<Account | null>(null);
  useEffect(() => {
    if (!party) return;
    let held: Account | null = null;
    let alive = true;
    const take = (a: Account) => {
      if (!alive || (held && a.asOfSeq < held.asOfSeq)) return;
      held = a;
      setAccount(a);
    };
    const watch = live.watch({ kinds: ['account.update'], party: [party] }, { onMessage: (m) => m.source === 'live' && m.frame.kind === 'account.update' && take(m.frame.payload) });
    void client.getAccount(party).then(take, () => {});
    return () => {
      alive = false;
      watch.close();
    };
  }, [client, live, party]);
  return account;
}

/** The party's open orders and recently ended ones (with their reason), from `order.update`. */
export function useOrders(party: string | null): { open: OrderUpdate[]; recent: OrderUpdate[] } {
  const { live } = useGateway();
  const store = useRef(new UserOrdersStore());
  const [orders, setOrders] = useState<{ open: OrderUpdate[]; recent: OrderUpdate[] }>({ open: [], recent: [] });
  useEffect(() => {
    if (!party) return;
    const s = (store.current = new UserOrdersStore());
    const watch = live.watch(
      { kinds: ['order.update'], party: [party] },
      {
        onMessage: (m) => {
          if (m.source === 'live' && m.frame.kind === 'order.update' && s.apply(m.frame)) setOrders({ open: s.open(), recent: s.recent() });
        },
        onReset: () => {
          s.clear();
          setOrders({ open: [], recent: [] });
        },
      },
    );
    return () => watch.close();
  }, [live, party]);
  return orders;
}

/** The party's fill legs, newest first, from `fill`. */
export function useFills(party: string | null): UserFill[] {
  const { live } = useGateway();
  const [fills, setFills] = useState<UserFill[]>([]);
  useEffect(() => {
    if (!party) return;
    const s = new UserFillsStore();
    const watch = live.watch(
      { kinds: ['fill'], party: [party] },
      {
        onMessage: (m) => {
          if (m.source === 'live' && m.frame.kind === 'fill' && s.apply(m.frame)) setFills(s.list());
        },
        onReset: () => {
          s.clear();
          setFills([]);
        },
      },
    );
    return () => watch.close();
  }, [live, party]);
  return fills;
}
