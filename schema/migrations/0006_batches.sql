-- Global batch manifests as recorded on chain.
CREATE TABLE batches (
  batch_num         bigint PRIMARY KEY,
  root              text NOT NULL,
  prev_root         text NOT NULL,
  user_batch_count  int NOT NULL,
  first_seq         bigint NOT NULL,
  last_seq          bigint NOT NULL,
  tx_id             text,
  committed_at      timestamptz NOT NULL
);
