-- One row per leg of an engine fill event.
CREATE TABLE fills (
  seq           bigint NOT NULL,
  leg           int NOT NULL,
  fill_id       text NOT NULL,
  match_id      text NOT NULL,
  order_id      text NOT NULL,
  party         text NOT NULL,
  market        text NOT NULL,
  side          text NOT NULL,
  role          text NOT NULL CHECK (role IN ('taker', 'maker')),
  size          numeric(38,10) NOT NULL,
  price         numeric(38,10) NOT NULL,
  fee           numeric(38,10) NOT NULL,
  realized_pnl  numeric(38,10) NOT NULL,
  new_balance   numeric(38,10) NOT NULL,
  position_id   text NOT NULL,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (seq, leg)
);
CREATE INDEX fills_party_seq ON fills (party, seq DESC);
CREATE INDEX fills_market_seq ON fills (market, seq DESC);
CREATE INDEX fills_party_market_seq ON fills (party, market, seq DESC);
