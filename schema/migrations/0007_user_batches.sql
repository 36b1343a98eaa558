-- Per-user merkle commitments as recorded on chain.
CREATE TABLE user_batches (
  party         text NOT NULL,
  user_seq      bigint NOT NULL,
  batch_num     bigint,
  root          text NOT NULL,
  prev_root     text NOT NULL,
  event_count   int NOT NULL,
  tx_id         text,
  committed_at  timestamptz NOT NULL,
  PRIMARY KEY (party, user_seq)
);
CREATE INDEX user_batches_batch_num ON user_batches (batch_num);
