-- Take-profit / stop-loss v2: attached legs on orders, sized and limit triggers.
ALTER TABLE orders
  ADD COLUMN reduce_only       boolean NOT NULL DEFAULT false,
  ADD COLUMN tp_trigger_price  numeric(38,10),
  ADD COLUMN tp_limit_price    numeric(38,10),
  ADD COLUMN tp_size           numeric(38,10),
  ADD COLUMN sl_trigger_price  numeric(38,10),
  ADD COLUMN sl_limit_price    numeric(38,10),
  ADD COLUMN sl_size           numeric(38,10);
ALTER TABLE triggers
  ADD COLUMN size         numeric(38,10),
  ADD COLUMN limit_price  numeric(38,10),
  ADD COLUMN fired_size   numeric(38,10);
