-- On-chain vault contract state, one row per operator.
CREATE TABLE vaults (
  operator           text PRIMARY KEY,
  contract_id        text NOT NULL,
  total_deposits     numeric(38,10) NOT NULL DEFAULT 0,
  total_withdrawals  numeric(38,10) NOT NULL DEFAULT 0,
  balance            numeric(38,10) NOT NULL DEFAULT 0,
  user_count         int NOT NULL DEFAULT 0,
  updated_seq        bigint NOT NULL,
  updated_at         timestamptz NOT NULL
);
