// The desk's envelopes (batch, cancel-replace) are the gateway's own grammar, and the socket checks
// the same envelopes with TypeBox, which never coerces. Fastify's Ajv runs with `coerceTypes`
// (app.ts: query strings need it), so on REST `"stopOnFailure": "true"`, `1` or `["ordered"]` for
// `mode`, or a number for `user` were accepted as the typed values: a client's type mistake
// changed what the batch did (ordered or not, stopping or not) instead of being refused, and REST
// accepted what the socket refused. These routes check their body with TypeBox instead: a value of
// the wrong type is a 400 naming the field, as every other bad input.
import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

interface AjvLikeError {
  keyword: string;
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** TypeBox's error in the shape validationMessage (validation.ts) reads from Ajv's. */
function ajvShaped(e: AjvLikeError): AjvLikeError {
  const params = e.params;
  if (e.keyword === 'required' && Array.isArray(params.requiredProperties)) return { ...e, params: { missingProperty: params.requiredProperties[0] } };
  if (e.keyword === 'additionalProperties' && Array.isArray(params.additionalProperties)) return { ...e, params: { additionalProperty: params.additionalProperties[0] } };
  return e;
}

/** A route's validator compiler that checks without coercing (the schema stays the route's, for OpenAPI). */
export const strictBodyCompiler: FastifySchemaCompiler<TSchema> = ({ schema }) => {
  const check = Compile(schema);
  const validate = (data: unknown) => {
    if (check.Check(data)) return true;
    // TypeBox reports an unknown field twice: as `additionalProperties: false` ("schema is false") and by name; the named one is read.
    const errors = [...check.Errors(data)] as AjvLikeError[];
    const named = errors.filter((e) => e.keyword !== 'boolean');
    validate.errors = (named.length > 0 ? named : errors).map(ajvShaped);
    return false;
  };
  validate.errors = [] as AjvLikeError[];
  return validate as never;
};
