-- The limit price a fired trigger actually used.
ALTER TABLE triggers ADD COLUMN fired_limit numeric(38,10);
