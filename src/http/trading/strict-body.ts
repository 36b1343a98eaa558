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

/**
 * The errors of the union branches the value could have meant. A batch item is a place or a cancel
 * by its `op` (a literal): a branch whose `op` does not match is not what the client sent, so its
 * errors ("body is required" for a cancel) would only mislead; the matching branch's are kept.
 */
function relevant(errors: AjvLikeError[]): AjvLikeError[] {
  const otherBranches = errors
    .filter((e) => e.keyword === 'const')
    .map((e) => /^(.*\/anyOf\/\d+)\//.exec(e.schemaPath)?.[1])
    .filter((b): b is string => b !== undefined);
  if (otherBranches.length === 0) return errors;
  return errors.filter((e) => !otherBranches.some((b) => e.schemaPath === b || e.schemaPath.startsWith(`${b}/`)));
}

/** A route's validator compiler that checks without coercing (the schema stays the route's, for OpenAPI). */
export const strictBodyCompiler: FastifySchemaCompiler<TSchema> = ({ schema }) => {
  const check = Compile(schema);
  const validate = (data: unknown) => {
    if (check.Check(data)) return true;
    // TypeBox reports an unknown field twice: as `additionalProperties: false` ("schema is false") and by name; the named one is read.
    const errors = [...check.Errors(data)] as AjvLikeError[];
    const named = relevant(errors).filter((e) => e.keyword !== 'boolean' && e.keyword !== 'anyOf');
    // No branch matched the op itself (`"op": "modify"`): the op is what is wrong.
    const ops = errors.filter((e) => e.keyword === 'const');
    validate.errors = (named.length > 0 ? named : ops.length > 0 ? ops : errors).map(ajvShaped);
    return false;
  };
  validate.errors = [] as AjvLikeError[];
  return validate as never;
};
