-- Trading sessions authorised by a party's key.
CREATE TABLE sessions (
  session_id   text PRIMARY KEY,
  party        text NOT NULL,
  public_key   text NOT NULL,
  expires_at   timestamptz NOT NULL,
  created_seq  bigint NOT NULL
);
CREATE INDEX sessions_party ON sessions (party);
