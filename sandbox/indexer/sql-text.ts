// Renders a batch's writes as SQL text with inline literals. The whole batch goes to the server as
// ONE simple-protocol message; PostgreSQL runs a multi-statement simple query as a single implicit
// transaction, and the PGlite socket server executes one message at a time, so the batch is atomic
// on both and no other connection's statement can land inside it (see docs/local-stack.md).

export type Literal = string | number | boolean | null | Record<string, unknown>;

/** Quotes a text literal. NUL cannot be stored in text/jsonb, so it becomes U+FFFD. */
export function quote(s: string): string {
  return `'${s.replaceAll('\u0000', '\uFFFD').replace(/'/g, "''")}'`;
}

export function literal(v: Literal): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError(`not a finite number: ${v}`);
    return String(v);
  }
  if (typeof v === 'string') return quote(v);
  // jsonb: "\u0000" escapes are rejected by jsonb, so they are replaced like raw NULs.
  return `${quote(JSON.stringify(v).replace(/\\u0000/g, '\\ufffd'))}::jsonb`;
}

export interface UpsertSpec {
  /** Conflict target columns. */
  key: string[];
  /** Columns overwritten on conflict; none → DO NOTHING. */
  update?: string[];
  /** Only overwrite when the incoming row is newer (a seq guard), e.g. "updated_seq". */
  newerThan?: string;
  /** Any other guard on the existing row, e.g. "withdrawals.decided_seq IS NULL". */
  where?: string;
}

/** One multi-row INSERT … ON CONFLICT for rows of the same table (empty string for no rows). */
export function insertSql<T extends object>(table: string, columns: Array<keyof T & string>, rows: T[], spec: UpsertSpec): string {
  if (rows.length === 0) return '';
  const values = rows
    .map((r) => `(${columns.map((c) => literal((r as Record<string, unknown>)[c] as Literal)).join(',')})`)
    .join(',\n');
  let conflict = `ON CONFLICT (${spec.key.join(',')}) DO NOTHING`;
  if (spec.update && spec.update.length > 0) {
    conflict = `ON CONFLICT (${spec.key.join(',')}) DO UPDATE SET ${spec.update.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`;
    if (spec.newerThan) conflict += ` WHERE ${table}.${spec.newerThan} < EXCLUDED.${spec.newerThan}`;
    else if (spec.where) conflict += ` WHERE ${spec.where}`;
  }
  return `INSERT INTO ${table} (${columns.join(',')}) VALUES\n${values}\n${conflict};\n`;
}
