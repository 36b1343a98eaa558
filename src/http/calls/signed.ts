// What the single signed calls (place, cancel, TP/SL) share: the signature and body read lazily,
// after the address budget was charged (a socket message's JSON and signing values are judged where
// REST's are, past the limiter), and the body of a socket message made into the bytes REST carries.
import type { SignedHeaders } from '../../auth/signed-request.js';
import { signedHeaders } from '../../auth/signed-request.js';
import { signedHeadersOf } from '../../auth/message-signature.js';
import { parseJson } from '../../engine/client.js';
import { messageSignature } from '../../stream/client-messages.js';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

export interface SignedInput {
  /** The signature, read as REST reads the signing headers (401 when one is missing). */
  readonly signature: () => SignedHeaders;
}

export interface SignedBodyInput extends SignedInput {
  /** The signed body's bytes (REST: as received; the socket: its `body` string, which must be JSON). */
  readonly body: () => Buffer | undefined;
}

/** A signed call carried by a request: its headers, its raw body. */
export function fromRequest(request: FastifyRequest): SignedBodyInput {
  return { signature: () => signedHeaders(request), body: () => request.rawBody };
}

/** A signed call carried by a socket message: `user`, `sessionId`, `sig` for the headers. */
export function signatureOfMessage(message: Record<string, unknown>): () => SignedHeaders {
  const fields = messageSignature(message);
  return () => signedHeadersOf(fields);
}

/** A message's `body` as the bytes REST would carry, judged as REST's JSON parser judges them. */
export function messageBody(text: string): () => Buffer {
  return () => {
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length === 0) throw new ApiError('bad_request', 'body is required: the signed order JSON');
    if (parseJson(bytes) === undefined) throw new ApiError('bad_request', 'request body is not valid JSON');
    return bytes;
  };
}

