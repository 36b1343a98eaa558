-- Take-profit / stop-loss triggers. size, limit_price, fired_size come in 0014; fired_limit in 0015.
CREATE TABLE triggers (
  trigger_id       text PRIMARY KEY,
  party            text NOT NULL,
  market           text NOT NULL,
  kind             text NOT NULL CHECK (kind IN ('tp', 'sl')),
  status           text NOT NULL CHECK (status IN ('armed', 'cancelled', 'fired')),
  trigger_price    numeric(38,10) NOT NULL,
  position_id      text,
  parent_order_id  text,
  fired_order_id   text,
  created_seq      bigint NOT NULL,
  updated_seq      bigint NOT NULL,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL
);
CREATE INDEX triggers_party_created ON triggers (party, created_seq DESC);
