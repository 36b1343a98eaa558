// Sends a list page the data layer already wrote as JSON (src/db/json/): its bytes as they are, with
// the content type Fastify's serializer would have set. The route's response schema still documents
// the body (and tests validate real bodies against it); it is not run again on bytes.
import type { FastifyReply } from 'fastify';
import type { JsonBody } from '../../db/json/json-body.js';

export function sendJson(reply: unknown, body: JsonBody): FastifyReply {
  return (reply as FastifyReply).type('application/json; charset=utf-8').send(body.bytes);
}
