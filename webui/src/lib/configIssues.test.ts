import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/transport';
import { issueMarks, issueText, refusedIssues } from './configIssues';

const config = 'name: x\nsearcher:\n  name: grid\n  max_concurent_trials: 4\n';

describe('config issues', () => {
  it('marks each issue on its line, from its first character to the end of the line', () => {
    const marks = issueMarks(
      config,
      [{ path: 'searcher.max_concurent_trials', line: 4, message: 'unknown key', text: '' }],
      [{ path: '', line: 0, message: 'whole config', text: '' }],
    );
    const [error, warning] = marks;
    expect(config.slice(error.from, error.to)).toBe('max_concurent_trials: 4');
    expect(error).toMatchObject({ line: 4, severity: 'error', message: 'searcher.max_concurent_trials: unknown key' });
    // No line: the first one.
    expect(config.slice(warning.from, warning.to)).toBe('name: x');
    expect(warning).toMatchObject({ line: 1, severity: 'warning', message: 'whole config' });
    // A line past the end (the text changed since the check) marks the first.
    expect(issueMarks('a: 1', [{ path: 'b', line: 9, message: 'm', text: '' }])[0].line).toBe(1);
  });

  it("reads a refused creation's problems, and says where each is", () => {
    const errors = [{ path: 'searcher.name', line: 3, message: 'must be one of ...', text: 'experiment.yaml:3: ...' }];
    const refused = new ApiError('experiment.yaml:3: ...', 400, 'invalid_config', {
      error: { code: 'invalid_config', message: '...' },
      errors,
      warnings: [],
    });
    expect(refusedIssues(refused)).toEqual({ errors, warnings: [] });
    expect(refusedIssues(new ApiError('no', 403, 'permission_denied', { error: {} }))).toBeNull();
    expect(issueText(errors[0])).toBe('line 3: searcher.name: must be one of ...');
    expect(issueText({ path: '', line: 0, message: 'empty', text: '' })).toBe('config: empty');
  });
});
