// A small trading screen on @gateway/client/react (docs/client.md "React"): one provider, one
// socket, a book, a tape, a chart's bars, the stream state, and a party of its own (made in the
// browser, funded by the faucet) with its account, orders and fills. The gateway: `?gateway=<url>`,
// else VITE_GATEWAY_URL at build or dev-server start, else the local stack's http://127.0.0.1:4000.
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { GatewayClient, formatMoney, formatPrice, formatSize, localParty, type Market } from '@gateway/client';
import { GatewayProvider, useGateway, useAccount, useCandles, useFills, useOrderBook, useOpenInterest, useOrders, useStreamState, useTrades } from '@gateway/client/react';

const gateway = new URLSearchParams(location.search).get('gateway') ?? ((import.meta as ImportMeta & { env: Record<string, string | undefined> }).env.VITE_GATEWAY_URL || 'http://127.0.0.1:4000');
const client = new GatewayClient({ baseUrl: gateway });
// The party is made once per page, outside React: StrictMode runs effects twice, and the client holds
// one session (a second party's session would sign the first party's reads).
const me = (async () => {
  const signer = await localParty('react');
  const session = await client.createSession(signer);
  if (!session.ok) throw new Error(`session: ${session.code}`);
  await client.faucet(signer.party).catch(() => null);
  return signer.party;
})();

function Book({ market }: { market: Market }) {
  const book = useOrderBook(market.symbol, { depth: 5 });
  const row = (side: 'bid' | 'ask') => ([price, size, count]: [string, string, number]) => (
    <tr key={price} data-testid={`book-${side}`}>
      <td className={side === 'bid' ? 'buy' : 'sell'}>{formatPrice(market, price)}</td>
      <td>{formatSize(market, size)}</td>
      <td className="dim">{count}</td>
    </tr>
  );
  return (
    <section>
      <h3>Book {market.symbol}</h3>
      <table>
        <tbody>
          {[...book.asks].reverse().map(row('ask'))}
          {book.bids.map(row('bid'))}
        </tbody>
      </table>
      <div className="dim" data-testid="book-seq">book seq {book.bookSeq ?? '–'}</div>
    </section>
  );
}

function Tape({ market }: { market: Market }) {
  const trades = useTrades(market.symbol, 20);
  const bars = useCandles(market.symbol, '1m', 100);
  const openInterest = useOpenInterest(market.symbol);
  return (
    <section>
      <h3>Trades</h3>
      <table>
        <tbody>
          {trades.map((t) => (
            <tr key={t.seq} data-testid="trade">
              <td className={t.side === 'buy' ? 'buy' : 'sell'}>{formatPrice(market, t.price)}</td>
              <td>{formatSize(market, t.size)}</td>
              <td className="dim">{t.createdAt.slice(11, 19)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="dim" data-testid="bars">{bars.length} bars (1m), last close {formatPrice(market, bars.at(-1)?.close ?? null)}</div>
      <div className="dim" data-testid="open-interest">open interest {openInterest === null ? '–' : formatSize(market, openInterest)}</div>
    </section>
  );
}

function Me({ party }: { party: string | null }) {
  const account = useAccount(party);
  const orders = useOrders(party);
  const fills = useFills(party);
  return (
    <section>
      <h3>Account</h3>
      <div>
        equity <b data-testid="equity">{formatMoney(account?.equity ?? null)}</b> · free {formatMoney(account?.freeCollateral ?? null)}
      </div>
      <div className="dim" data-testid="orders">
        {orders.open.length} open orders · {fills.length} fills
      </div>
    </section>
  );
}

function App() {
  const state = useStreamState();
  // For probes (the browser test reads the connection's filters).
  (window as unknown as { __gateway?: unknown }).__gateway = useGateway();
  const [markets, setMarkets] = useState<Market[]>([]);
  const [party, setParty] = useState<string | null>(null);
  useEffect(() => {
    void client.listMarkets().then((m) => setMarkets(m.items));
    void me.then(setParty, () => setParty(null));
  }, []);
  const market = markets[0];
  return (
    <>
      <h2>
        @gateway/client/react · stream <span data-testid="state">{state}</span>
      </h2>
      {market ? (
        <div className="grid">
          <Book market={market} />
          <Tape market={market} />
          <Me party={party} />
        </div>
      ) : (
        <p>loading markets…</p>
      )}
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <GatewayProvider client={client}>
      <App />
    </GatewayProvider>
  </StrictMode>,
);
