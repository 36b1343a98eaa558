// Turns a schema validation failure into one message that names the parameter and what was wrong,
// e.g. `query parameter "limit" must be <= 1000`.
import type { FastifyError } from 'fastify';

const CONTEXT: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  body: 'body field',
  headers: 'header',
};

export function validationMessage(error: FastifyError): string {
  const first = error.validation?.[0];
  const where = CONTEXT[error.validationContext ?? ''] ?? 'parameter';
  if (!first) return error.message;
  const params = first.params as Record<string, unknown>;
  if (first.keyword === 'required' && typeof params.missingProperty === 'string') {
    return `${where} "${params.missingProperty}" is required`;
  }
  if (first.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return `${where} "${params.additionalProperty}" is not allowed`;
  }
  const name = first.instancePath.replace(/^\//, '').replace(/\/\d+$/, '').replace(/\//g, '.') || 'value';
  let detail = first.message ?? 'is invalid';
  if (first.keyword === 'pattern') detail = 'has an invalid format';
  if (first.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    detail = `must be one of ${params.allowedValues.join(', ')}`;
  }
  return `${where} "${name}" ${detail}`;
}
