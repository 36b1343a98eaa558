-- Withdrawal requests and the engine's decision on each.
CREATE TABLE withdrawals (
  seq            bigint PRIMARY KEY,
  withdrawal_id  text NOT NULL,
  party          text NOT NULL,
  amount         numeric(38,10) NOT NULL,
  nonce          bigint NOT NULL,
  status         text NOT NULL CHECK (status IN ('requested', 'approved', 'rejected')),
  reason         text,
  decided_seq    bigint,
  created_at     timestamptz NOT NULL,
  decided_at     timestamptz
);
CREATE INDEX withdrawals_party_seq ON withdrawals (party, seq DESC);
CREATE INDEX withdrawals_status_seq ON withdrawals (status, seq DESC);
CREATE UNIQUE INDEX withdrawals_withdrawal_id ON withdrawals (withdrawal_id);
