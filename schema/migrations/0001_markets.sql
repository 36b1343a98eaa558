-- Markets the engine trades, mirrored by the indexer.
CREATE TABLE markets (
  symbol        text PRIMARY KEY,
  sz_decimals   int NOT NULL,
  min_notional  numeric(38,10) NOT NULL,
  max_leverage  int NOT NULL,
  status        text NOT NULL
);
