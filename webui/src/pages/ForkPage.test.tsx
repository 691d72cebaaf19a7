import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { describe, expect, it, vi } from 'vitest';
import { experiment, fakeFetch, json, signIn } from '../test/fixtures';
import { render } from '../test/render';
import { ForkPage } from './ForkPage';

// CodeMirror needs a layout jsdom has not: the editor is a textarea here.
vi.mock('../components/YamlEditor', () => import('../test/RecordingYamlEditor'));

const parentConfig = 'name: grid\nsearcher:\n  name: grid\n  max_concurrent_trials: 4\n';

function page(fake: ReturnType<typeof fakeFetch>) {
  vi.stubGlobal('fetch', fake.fn);
  signIn();
  window.history.replaceState(null, '', '/experiments/1/fork');
  return render(
    <Routes>
      <Route path="/experiments/1/fork" element={<ForkPage id={1} />} />
      <Route path="/experiments/:id" element={<p>experiment page</p>} />
    </Routes>,
  );
}

describe('ForkPage', () => {
  it("checks the edited config and marks the master's problems at their lines", async () => {
    const fake = fakeFetch({
      '/api/v1/experiments/check': (_url, init) => {
        const { config } = JSON.parse(String(init?.body));
        return json(
          config.includes('max_concurent_trials')
            ? {
                valid: false,
                errors: [
                  {
                    path: 'searcher.max_concurent_trials',
                    line: 4,
                    message: 'unknown key "searcher.max_concurent_trials"',
                    text: 'experiment.yaml:4: unknown key',
                  },
                ],
                warnings: [],
              }
            : { valid: true, errors: [], warnings: [] },
        );
      },
      '/api/v1/templates': () => json({ templates: [], total: 0 }),
      '/api/v1/experiments/1': () => json(experiment({ config: parentConfig })),
    });
    page(fake);
    const editor = await screen.findByRole('textbox', { name: 'Experiment config (YAML)' });
    expect((editor as HTMLTextAreaElement).value).toBe(parentConfig);
    fireEvent.change(editor, { target: { value: parentConfig.replace('concurrent', 'concurent') } });
    fireEvent.click(screen.getByRole('button', { name: 'Check' }));
    const problem = await screen.findByText(
      'line 4: searcher.max_concurent_trials: unknown key "searcher.max_concurent_trials"',
    );
    expect(problem.getAttribute('data-line')).toBe('4');
    const marks = screen.getByRole('list', { name: 'Editor marks' });
    expect(
      within(marks)
        .getAllByRole('listitem')
        .map((m) => [m.dataset.line, m.dataset.severity]),
    ).toEqual([['4', 'error']]);
    const sent = fake.calls.find((c) => c.url === '/api/v1/experiments/check')!;
    expect(JSON.parse(String(sent.init?.body))).toEqual({ config: parentConfig.replace('concurrent', 'concurent') });

    fireEvent.change(editor, { target: { value: parentConfig } });
    fireEvent.click(screen.getByRole('button', { name: 'Check' }));
    expect(await screen.findByText('The master found no problem in this config.')).toBeTruthy();
    expect(within(marks).queryAllByRole('listitem')).toHaveLength(0);
  });

  it('creates the fork with forked_from and opens it; a refused config is marked instead', async () => {
    let refuse = true;
    const fake = fakeFetch({
      '/api/v1/templates': () =>
        json({
          templates: [{ name: 'cpu', config: 'resources: {}\n', owner: 'admin', created_at: '', updated_at: '' }],
          total: 1,
        }),
      '/api/v1/experiments/1': () => json(experiment({ config: parentConfig })),
      '/api/v1/experiments': () => {
        if (refuse) {
          refuse = false;
          return json(
            {
              error: { code: 'invalid_config', message: 'experiment.yaml:3: searcher.name: unknown searcher' },
              errors: [{ path: 'searcher.name', line: 3, message: 'unknown searcher', text: '' }],
              warnings: [],
            },
            400,
          );
        }
        return json({ id: 7, warnings: [] }, 201);
      },
    });
    page(fake);
    await screen.findByRole('textbox', { name: 'Experiment config (YAML)' });
    fireEvent.change(await screen.findByLabelText('Template'), { target: { value: 'cpu' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create fork' }));
    expect(await screen.findByText('line 3: searcher.name: unknown searcher')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Create fork' }));
    expect(await screen.findByText('experiment page')).toBeTruthy();
    expect(window.location.pathname).toBe('/experiments/7');
    const posts = fake.calls.filter((c) => c.url === '/api/v1/experiments' && c.init?.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(JSON.parse(String(posts[1].init?.body))).toEqual({
      config: parentConfig,
      forked_from: 1,
      activate: true,
      template: 'cpu',
    });
    await waitFor(() => expect(screen.queryByRole('alert')).toBeNull());
  });
});
