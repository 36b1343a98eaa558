-- Position epochs: a flip closes one position_id and opens another.
CREATE TABLE positions (
  position_id   text PRIMARY KEY,
  party         text NOT NULL,
  market        text NOT NULL,
  size          numeric(38,10) NOT NULL,
  entry_price   numeric(38,10) NOT NULL,
  realized_pnl  numeric(38,10) NOT NULL DEFAULT 0,
  status        text NOT NULL CHECK (status IN ('open', 'closed')),
  opened_seq    bigint NOT NULL,
  updated_seq   bigint NOT NULL,
  closed_seq    bigint,
  opened_at     timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  closed_at     timestamptz
);
CREATE INDEX positions_party_status_updated ON positions (party, status, updated_seq DESC);
CREATE INDEX positions_party_updated ON positions (party, updated_seq DESC);
