// Checks answers the master gave a test against docs/openapi.json:
//   node check_answers.mjs docs/openapi.json answers.jsonl
// Each line of answers.jsonl is one answer, {"method", "target" (path and
// query), "status", "content_type", "body" (the text; absent for binary
// media), "body_bytes"}; tests/support/api_answers.cc writes them. Each is
// matched to its operation (the path template with the most literal
// segments), then to the operation's response for its status (exact, then
// 4XX-style, then default), whose media type it must have and, for JSON,
// whose schema Ajv validates the body against. Answers to paths outside
// /api/ that the document does not describe (the web UI's files) are not
// API answers and pass. Prints one line per mismatch and exits 1 when there
// is any, 0 when every answer matches, 2 when it cannot check.
import { readFileSync } from 'node:fs';
import { describeErrors, loadDocument, newAjv } from './openapi_schemas.mjs';

const [docPath, answersPath] = process.argv.slice(2);
if (!docPath || !answersPath) {
  console.error('usage: node check_answers.mjs docs/openapi.json answers.jsonl');
  process.exit(2);
}

let doc;
try {
  doc = await loadDocument(docPath);
} catch (e) {
  console.error(`cannot read ${docPath}: ${e.message}`);
  process.exit(2);
}
const ajv = newAjv();
const isParam = (segment) => /^\{[^}]+\}$/.test(segment);

// The path template of `path` and its path item, or null.
function findPath(path) {
  const segments = path.split('/');
  let best = null;
  for (const [template, item] of Object.entries(doc.paths)) {
    const parts = template.split('/');
    if (parts.length !== segments.length) continue;
    if (!parts.every((p, i) => isParam(p) || p === segments[i])) continue;
    const literal = parts.filter((p) => !isParam(p)).length;
    if (!best || literal > best.literal) best = { template, item, literal };
  }
  return best;
}

function findResponse(responses, status) {
  return responses[String(status)] ?? responses[`${String(status)[0]}XX`] ?? responses.default;
}

const mediaType = (contentType) => (contentType ?? '').split(';')[0].trim().toLowerCase();
const isJson = (media) => media === 'application/json' || media.endsWith('+json');

// What is wrong with one answer: [] when it matches, else lines.
function check(answer) {
  const path = answer.target.split('?')[0];
  const found = findPath(path);
  let route = `${answer.method} ${path}`;
  let response;
  if (!found) {
    if (!path.startsWith('/api/')) return { route, problems: [] };
    // No such route: the answer is an error, as every operation's are.
    if (answer.status < 400)
      return { route, problems: [`answered ${answer.status} to a path the document does not have`] };
    response = doc.components.responses.Error;
  } else {
    route = `${answer.method} ${found.template}`;
    const op = found.item[answer.method.toLowerCase()];
    if (!op) {
      if (answer.status < 400)
        return { route, problems: [`answered ${answer.status} to a method the document does not have`] };
      response = doc.components.responses.Error;
    } else {
      response = findResponse(op.responses, answer.status);
      if (!response) return { route, problems: [`status ${answer.status} is not documented`] };
    }
  }

  const media = mediaType(answer.content_type);
  const content = response.content;
  if (!content) {
    if (answer.body_bytes > 0)
      return {
        route,
        problems: [`documented without a body, got ${answer.body_bytes} bytes of ${media || 'no type'}`],
      };
    return { route, problems: [] };
  }
  const entry = content[media] ?? content[`${media.split('/')[0]}/*`] ?? content['*/*'];
  if (!entry) {
    const documented = Object.keys(content).join(', ');
    return { route, problems: [`Content-Type is "${answer.content_type}", documented: ${documented}`] };
  }
  if (!entry.schema) return { route, problems: [] };
  let body = answer.body ?? '';
  if (isJson(media)) {
    try {
      body = JSON.parse(body);
    } catch {
      return { route, problems: [`the body is not JSON: ${JSON.stringify(String(answer.body).slice(0, 80))}`] };
    }
  }
  const validate = ajv.compile(entry.schema);
  if (validate(body)) return { route, problems: [] };
  return { route, problems: describeErrors(validate.errors, body) };
}

const lines = readFileSync(answersPath, 'utf8')
  .split('\n')
  .filter((l) => l.trim());
const failures = new Map(); // one report per route, status and problems, with a count
for (const line of lines) {
  const answer = JSON.parse(line);
  const { route, problems } = check(answer);
  if (!problems.length) continue;
  const shown = problems.slice(0, 5).join('; ') + (problems.length > 5 ? `; and ${problems.length - 5} more` : '');
  const key = `${route} answered ${answer.status} (${answer.method} ${answer.target}): ${shown}`;
  const groupKey = `${route} ${answer.status} ${shown}`;
  const seen = failures.get(groupKey);
  if (seen) ++seen.count;
  else failures.set(groupKey, { text: key, count: 1 });
}
for (const { text, count } of failures.values())
  console.log(count > 1 ? `${text} (and ${count - 1} more like it)` : text);
console.log(
  `${lines.length} answers checked against ${docPath}: ${failures.size ? `${failures.size} kinds of mismatch` : 'all match'}`,
);
process.exit(failures.size ? 1 : 0);
