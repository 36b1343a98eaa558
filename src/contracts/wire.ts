// The scalar types of the gateway's wire (REST bodies and stream frames alike), as TypeBox
// schemas: one definition gives validation, TypeScript types and the OpenAPI/AsyncAPI text.
import { Type } from 'typebox';

export const PARTY_PATTERN = '^[a-z0-9][a-z0-9_-]{0,47}::[0-9a-f]{64}$';
/** Market symbols are exact engine strings: printable ASCII without spaces, 1-64 characters. */
export const MARKET_PATTERN = '^[\\x21-\\x7E]{1,64}$';
export const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** Exactly 10 decimal places, as PostgreSQL prints numeric(38,10). */
export const DECIMAL_PATTERN = '^-?\\d+\\.\\d{10}$';

export const Decimal = Type.String({
  pattern: DECIMAL_PATTERN,
  description: 'Decimal as a string with exactly 10 decimal places',
  examples: ['65000.0000000000'],
});
export const NullableDecimal = Type.Union([Decimal, Type.Null()]);
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
export const Seq = Type.Integer({ minimum: 0, maximum: MAX_SEQ, description: 'Engine event sequence number' });
export const NullableSeq = Type.Union([Seq, Type.Null()]);

export const Party = Type.String({
  pattern: PARTY_PATTERN,
  maxLength: 114,
  description: 'Party id `<hint>::<ed25519 public key hex>`',
});
/**
 * A client order id: 1–64 characters, none of them a control character (C0, DEL, C1: a NUL cannot
 * even be stored in PostgreSQL text, CR/LF split log lines), and not "." or ".." (a path segment
 * every URL parser resolves away, so the status route could never be asked for it).
 */
export const CLIENT_ORDER_ID_PATTERN = '^(?!\\.\\.?$)[^\\u0000-\\u001f\\u007f-\\u009f]+$';
export const ClientOrderId = (description = '1–64 characters, no control characters, not "." or ".."') =>
  Type.String({ minLength: 1, maxLength: 64, pattern: CLIENT_ORDER_ID_PATTERN, description });

export const Market = Type.String({ pattern: MARKET_PATTERN, description: 'Exact engine market symbol, e.g. BTC-PERP' });
