// The master's config problems (POST /experiments/check, or a refused POST
// /experiments) as editor marks: each issue names its key path and 1-based
// YAML line (0 when it has none, e.g. a problem of the whole config). A mark
// spans its line's text (from the first non-blank character), so it sits on
// the key the master names; an issue without a line marks the first line.
import type { ApiError } from '../api/transport';
import type { ConfigIssue } from '../api/types';

export interface IssueMark {
  from: number;
  to: number;
  line: number; // 1-based, as shown
  severity: 'error' | 'warning';
  message: string;
}

export function issueMarks(doc: string, errors: ConfigIssue[], warnings: ConfigIssue[] = []): IssueMark[] {
  const lines = doc.split('\n');
  const starts: number[] = [];
  let at = 0;
  for (const l of lines) {
    starts.push(at);
    at += l.length + 1;
  }
  const mark = (issue: ConfigIssue, severity: IssueMark['severity']): IssueMark => {
    const line = issue.line >= 1 && issue.line <= lines.length ? issue.line : 1;
    const text = lines[line - 1] ?? '';
    const indent = text.length - text.trimStart().length;
    const from = starts[line - 1] + (indent < text.length ? indent : 0);
    const to = Math.max(from, starts[line - 1] + text.length);
    return { from, to, line, severity, message: issue.path ? `${issue.path}: ${issue.message}` : issue.message };
  };
  return [...errors.map((e) => mark(e, 'error')), ...warnings.map((w) => mark(w, 'warning'))];
}

// The problems listed in a refused creation's answer (400 invalid_config).
export function refusedIssues(e: unknown): { errors: ConfigIssue[]; warnings: ConfigIssue[] } | null {
  const body = (e as ApiError | null)?.body as { errors?: ConfigIssue[]; warnings?: ConfigIssue[] } | null;
  if (!body || !Array.isArray(body.errors)) return null;
  return { errors: body.errors, warnings: Array.isArray(body.warnings) ? body.warnings : [] };
}

// A line of the issue list: where, then what.
export function issueText(issue: ConfigIssue): string {
  const where = issue.line > 0 ? `line ${issue.line}` : 'config';
  return `${where}: ${issue.path ? `${issue.path}: ` : ''}${issue.message}`;
}
