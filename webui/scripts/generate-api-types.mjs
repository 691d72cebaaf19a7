// Generates src/api/openapi.d.ts, the TypeScript types of the REST API, from
// docs/openapi.json with openapi-typescript. `npm run generate` runs it, and
// so do the dev, build, typecheck and test scripts first; the file is not
// committed. It is rewritten only when it changes, so watchers stay quiet.
import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';

const source = new URL('../../docs/openapi.json', import.meta.url);
const target = new URL('../src/api/openapi.d.ts', import.meta.url);

const banner = `// Generated from docs/openapi.json by \`npm run generate\` (openapi-typescript);
// do not edit. src/api/types.ts names the shapes the pages use.
`;
const text = banner + astToString(await openapiTS(source));
let current = null;
try {
  current = readFileSync(target, 'utf8');
} catch {
  // not generated yet
}
if (current !== text) writeFileSync(target, text);
