-- Engine orders (mirror). The take-profit/stop-loss v2 columns come in 0014.
CREATE TABLE orders (
  order_id         text PRIMARY KEY,
  party            text NOT NULL,
  market           text NOT NULL,
  side             text NOT NULL,
  type             text NOT NULL,
  tif              text NOT NULL,
  price            numeric(38,10),
  size             numeric(38,10) NOT NULL,
  filled_size      numeric(38,10) NOT NULL DEFAULT 0,
  avg_price        numeric(38,10),
  status           text NOT NULL,
  client_order_id  text,
  created_seq      bigint NOT NULL,
  updated_seq      bigint NOT NULL,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX orders_party_created ON orders (party, created_seq DESC);
CREATE INDEX orders_market_created ON orders (market, created_seq DESC);
CREATE INDEX orders_party_status ON orders (party, status);
CREATE INDEX orders_created ON orders (created_seq DESC);
CREATE INDEX orders_status_created ON orders (status, created_seq DESC);
