-- Per-party withdrawal nonce.
CREATE TABLE withdrawal_counters (
  party        text PRIMARY KEY,
  nonce        bigint NOT NULL,
  updated_seq  bigint NOT NULL
);
