// docs/openapi.json for the checks: read and dereferenced by swagger-parser
// (every $ref inlined, so each schema stands alone), and its schemas compiled
// by Ajv as JSON Schema 2020-12, the dialect of OpenAPI 3.1, strictly: an
// unknown keyword, a `required` name without its property or an unknown
// format is an error, not a schema that accepts everything.
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export function newAjv() {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
  addFormats(ajv);
  return ajv;
}

// The dereferenced document (an object; throws when a $ref does not resolve).
export async function loadDocument(path) {
  return SwaggerParser.dereference(path);
}

// Every schema of the document with where it is, for reports:
// [{where: "GET /api/v1/x responses 200 application/json", schema}].
export function* documentSchemas(doc) {
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {}))
    yield { where: `components.schemas.${name}`, schema };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item)) {
      if (typeof op !== 'object' || !op.responses) continue;
      const route = `${method.toUpperCase()} ${path}`;
      for (const p of op.parameters ?? [])
        if (p.schema) yield { where: `${route} parameter ${p.name}`, schema: p.schema };
      for (const [media, m] of Object.entries(op.requestBody?.content ?? {}))
        if (m.schema) yield { where: `${route} request body ${media}`, schema: m.schema };
      for (const [status, r] of Object.entries(op.responses))
        for (const [media, m] of Object.entries(r.content ?? {}))
          if (m.schema) yield { where: `${route} response ${status} ${media}`, schema: m.schema };
    }
  }
}

// Ajv's errors as one line each: where in the body, what is wrong, and the
// value found there.
export function describeErrors(errors, body) {
  return errors.map((e) => {
    let detail = '';
    if (e.params?.additionalProperty !== undefined) detail = `: "${e.params.additionalProperty}"`;
    else if (e.params?.allowedValues) detail = `: ${e.params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    let found = '';
    if (e.instancePath && e.keyword !== 'required' && e.keyword !== 'additionalProperties') {
      const value = e.instancePath
        .split('/')
        .slice(1)
        .reduce((v, k) => (v == null ? v : v[k.replaceAll('~1', '/').replaceAll('~0', '~')]), body);
      found = `, got ${JSON.stringify(value)?.slice(0, 80)}`;
    }
    return `${e.instancePath || '/'} ${e.message}${detail}${found}`;
  });
}
