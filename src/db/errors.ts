// What the data layer raises when a read cannot be answered. These are domain errors: the data
// layer knows nothing of HTTP, and the edge (the HTTP error handler, the stream upgrade) maps
// them to statuses and wire codes (src/http/errors.ts `fromDomainError`).

/** The database is unreachable, too slow (past the one deadline), or failed this read. */
export class DatabaseUnavailableError extends Error {
  constructor(message = 'the indexer database is unavailable; retry shortly') {
    super(message);
    this.name = 'DatabaseUnavailableError';
  }
}

export const SCHEMA_FIX = 'migrate the indexer (0014_tpsl_v2, 0015_fired_limit), then redeploy the gateway';

/** The indexer schema lacks columns a read names (its migrations are behind the gateway). */
export class SchemaBehindError extends Error {
  constructor(readonly missingMigrations: string[]) {
    const list = missingMigrations.length ? missingMigrations.join(', ') : '0014_tpsl_v2, 0015_fired_limit';
    super(`the indexer database is missing migration(s) ${list}; ${SCHEMA_FIX}`);
    this.name = 'SchemaBehindError';
  }
}

export type DataError = DatabaseUnavailableError | SchemaBehindError;

export function isDataError(err: unknown): err is DataError {
  return err instanceof DatabaseUnavailableError || err instanceof SchemaBehindError;
}

/**
 * One client address already has DB_ADDRESS_QUEUE reads waiting for the database pool (read-share.ts):
 * this read is refused before it is sent. Not a failure of the database: the dependency stays up.
 */
export class ReadsExhaustedError extends Error {
  constructor(readonly waiting: number) {
    super(`this client address has ${waiting} reads waiting for the database (DB_ADDRESS_QUEUE); retry once some are answered`);
    this.name = 'ReadsExhaustedError';
  }
}
