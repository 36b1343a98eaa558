-- Every engine event in seq order; the other mirror tables are projections of it.
CREATE TABLE events (
  seq      bigint PRIMARY KEY,
  kind     text NOT NULL,
  ts       timestamptz NOT NULL,
  market   text,
  party    text,
  payload  jsonb NOT NULL
);
CREATE INDEX events_kind_seq ON events (kind, seq);
CREATE INDEX events_party_seq ON events (party, seq);
CREATE INDEX events_market_seq ON events (market, seq);
