-- Deposit receipts (chain deposits and testnet faucet top-ups).
CREATE TABLE deposits (
  seq         bigint PRIMARY KEY,
  deposit_id  text NOT NULL,
  party       text NOT NULL,
  amount      numeric(38,10) NOT NULL,
  source      text NOT NULL CHECK (source IN ('chain', 'faucet')),
  tx_id       text,
  created_at  timestamptz NOT NULL
);
CREATE INDEX deposits_party_seq ON deposits (party, seq DESC);
