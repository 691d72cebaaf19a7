// Checks docs/openapi.json (the path given) as a CTest test: first
// swagger-parser validates it against the OpenAPI 3.1 specification's schema
// and resolves every $ref, then Ajv compiles each of its schemas strictly
// (openapi_schemas.mjs), which the specification's schema leaves unchecked.
// Exits 1 with the validators' messages when either fails.
import SwaggerParser from '@apidevtools/swagger-parser';
import { documentSchemas, newAjv } from './openapi_schemas.mjs';

const path = process.argv[2];
if (!path) {
  console.error('usage: node check_document.mjs docs/openapi.json');
  process.exit(2);
}

let doc;
try {
  doc = await SwaggerParser.validate(path);
} catch (e) {
  console.error(`${path} is not a valid OpenAPI document: ${e.message}`);
  process.exit(1);
}
if (!doc.openapi?.startsWith('3.1.')) {
  console.error(`${path} says openapi ${doc.openapi}; its schemas are JSON Schema 2020-12, so it must say 3.1.x`);
  process.exit(1);
}

const ajv = newAjv();
const problems = [];
let count = 0;
for (const { where, schema } of documentSchemas(doc)) {
  ++count;
  try {
    ajv.compile(schema);
  } catch (e) {
    problems.push(`${where}: ${e.message}`);
  }
}
if (problems.length) {
  // A broken component shows wherever it is used: the first few say enough.
  const shown = problems.slice(0, 20).join('\n  ');
  const more = problems.length > 20 ? `\n  and ${problems.length - 20} more` : '';
  console.error(`${path}: ${problems.length} of its ${count} schemas do not compile:\n  ${shown}${more}`);
  process.exit(1);
}
console.log(`${path}: a valid OpenAPI ${doc.openapi} document; its ${count} schemas compile`);
