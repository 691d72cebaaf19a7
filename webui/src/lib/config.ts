// A few settings of an experiment, read from its config text (the YAML the
// master stores): the searcher's length and its unit, and how long the
// experiment keeps checkpoints and logs. Reads the subset of YAML configs
// use for these keys (block mappings by indentation, one-line flow mappings
// such as `max_length: {batches: 300}`, quoted scalars); lists and block
// scalars are skipped, so a key inside them is never mistaken for one of these.

export type ConfigNode = string | { [key: string]: ConfigNode };
type ConfigMap = { [key: string]: ConfigNode };

function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i);
  }
  return line;
}

function unquote(s: string): string {
  const t = s.trim();
  if (t.length >= 2 && (t[0] === '"' || t[0] === "'") && t.at(-1) === t[0]) return t.slice(1, -1);
  return t;
}

// Splits at the commas that are not inside brackets or quotes.
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(s.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(s.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

// The `key: value` of a line, or null; the key may be quoted.
function splitKey(s: string): [string, string] | null {
  const m = /^("[^"]*"|'[^']*'|[^\s:"'{}[\],][^:]*?)\s*:(?:\s+(.*))?$/.exec(s);
  return m ? [unquote(m[1]), (m[2] ?? '').trim()] : null;
}

function scalarOrFlow(value: string): ConfigNode {
  if (value.startsWith('{') && value.endsWith('}')) {
    const out: ConfigMap = {};
    for (const part of splitTop(value.slice(1, -1))) {
      const kv = splitKey(part);
      if (kv) out[kv[0]] = scalarOrFlow(kv[1]);
    }
    return out;
  }
  return unquote(value);
}

export function parseConfig(text: string): ConfigMap {
  const root: ConfigMap = {};
  const stack: { indent: number; map: ConfigMap }[] = [{ indent: -1, map: root }];
  let skipDeeperThan: number | null = null; // inside a list or a block scalar
  for (const raw of text.split(/\r?\n/)) {
    const line = stripComment(raw);
    if (line.trim() === '' || line.trim() === '---') continue;
    const indent = line.length - line.trimStart().length;
    if (skipDeeperThan !== null) {
      if (indent > skipDeeperThan) continue;
      skipDeeperThan = null;
    }
    const body = line.trim();
    if (body.startsWith('- ') || body === '-') {
      skipDeeperThan = indent;
      continue;
    }
    while (stack.length > 1 && stack[stack.length - 1].indent >= indent) stack.pop();
    const kv = splitKey(body);
    if (!kv) continue;
    const [key, value] = kv;
    const parent = stack[stack.length - 1].map;
    if (value === '') {
      const child: ConfigMap = {};
      parent[key] = child;
      stack.push({ indent, map: child });
    } else if (/^[|>][-+0-9]*$/.test(value)) {
      parent[key] = '';
      skipDeeperThan = indent;
    } else parent[key] = scalarOrFlow(value);
  }
  return root;
}

function at(node: ConfigNode | undefined, path: string[]): ConfigNode | undefined {
  let n = node;
  for (const k of path) {
    if (n === undefined || typeof n === 'string') return undefined;
    n = n[k];
  }
  return n;
}

function intAt(node: ConfigNode | undefined, path: string[]): number | null {
  const v = at(node, path);
  return typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : null;
}

// The unit a trial's length is counted in, as `POST /trials/{id}/continue`
// takes it: max_length's (batches, records or epochs; null for a bare
// number), or the time_metric under the trial-driven contract; and the
// length the searcher was given.
export interface SearcherLength {
  unit: string | null;
  length: number | null;
}

export function searcherLength(config: ConfigMap): SearcherLength {
  const searcher = at(config, ['searcher']);
  const maxLength = at(searcher, ['max_length']);
  if (typeof maxLength === 'string') return { unit: null, length: intAt(searcher, ['max_length']) };
  if (maxLength) {
    const unit = Object.keys(maxLength)[0] ?? null;
    return { unit, length: unit ? intAt(maxLength, [unit]) : null };
  }
  const timeMetric = at(searcher, ['time_metric']);
  if (typeof timeMetric === 'string' && timeMetric) return { unit: timeMetric, length: intAt(searcher, ['max_time']) };
  return { unit: 'batches', length: null };
}

// How long an experiment keeps its checkpoints and logs: the counts default
// as the master's do (experiment-config.md), `logRetentionDays` is -1 for
// forever and null for the master's default.
export interface Retention {
  saveExperimentBest: number;
  saveTrialBest: number;
  saveTrialLatest: number;
  logRetentionDays: number | null;
}

export function retentionOf(config: ConfigMap): Retention {
  const storage = at(config, ['checkpoint_storage']);
  return {
    saveExperimentBest: intAt(storage, ['save_experiment_best']) ?? 0,
    saveTrialBest: intAt(storage, ['save_trial_best']) ?? 1,
    saveTrialLatest: intAt(storage, ['save_trial_latest']) ?? 1,
    logRetentionDays:
      intAt(config, ['log_retention_days']) ?? intAt(config, ['retention_policy', 'log_retention_days']),
  };
}
