import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { experiment, fakeFetch, json, project, signIn, workspace } from '../test/fixtures';
import { render } from '../test/render';
import { ExperimentPage } from './ExperimentPage';

vi.mock('../components/LineChart', () => import('../test/RecordingLineChart'));

const noMetrics = () => json({ kind: 'validation', metric: 'validation_loss', metric_names: [], series: [] });

function master(owner: string) {
  let current = experiment({ owner, state: 'COMPLETED' });
  const fake = fakeFetch({
    '/api/v1/experiments/1/trials': () => json({ trials: [], total: 0 }),
    '/api/v1/experiments/1/metrics': noMetrics,
    '/api/v1/experiments/1/checkpoints': () => json({ checkpoints: [] }),
    '/api/v1/experiments/1/model_definition': () => new Response(new Uint8Array(), { status: 404 }),
    '/api/v1/experiments/1/move': (_url, init) => {
      const { project_id } = JSON.parse(String(init?.body));
      if (project_id === 8)
        return json({ error: { code: 'conflict', message: 'project "frozen" or its workspace is archived' } }, 409);
      current = { ...current, project_id: 5, project: 'bert', workspace_id: 2, workspace: 'nlp' };
      return json({ id: 1, project_id: 5, project: 'bert', workspace_id: 2, workspace: 'nlp' });
    },
    '/api/v1/experiments/1': () => json(current),
    '/api/v1/workspaces/1/projects': () =>
      json({ projects: [project(), project({ id: 8, name: 'frozen' })], total: 2 }),
    '/api/v1/workspaces/2/projects': () =>
      json({ projects: [project({ id: 5, workspace_id: 2, workspace: 'nlp', name: 'bert' })], total: 1 }),
    '/api/v1/workspaces': () => json({ workspaces: [workspace(), workspace({ id: 2, name: 'nlp' })], total: 2 }),
  });
  vi.stubGlobal('fetch', fake.fn);
  return fake;
}

describe('ExperimentPage and workspaces', () => {
  it('shows its workspace and project as links and moves it', async () => {
    const fake = master('admin');
    signIn();
    render(<ExperimentPage id={1} />);
    const place = (await screen.findByText('Project')).nextElementSibling as HTMLElement;
    expect(Array.from(place.querySelectorAll('a')).map((a) => [a.textContent, a.getAttribute('href')])).toEqual([
      ['Uncategorized', '/workspaces/1'],
      ['Uncategorized', '/experiments?workspace_id=1&project_id=1'],
    ]);

    fireEvent.click(screen.getByRole('button', { name: 'Move experiment 1 to another project' }));
    const dialog = screen.getByRole('dialog', { name: 'Move experiment 1 to another project' });
    const select = within(dialog).getByLabelText('Project') as HTMLSelectElement;
    await waitFor(() => expect(select.options.length).toBe(4));
    // Where it is cannot be chosen.
    expect(Array.from(select.options).map((o) => [o.textContent, o.disabled])).toEqual([
      ['Choose a project', true],
      ['Uncategorized / Uncategorized (where it is)', true],
      ['Uncategorized / frozen', false],
      ['nlp / bert', false],
    ]);
    fireEvent.change(select, { target: { value: '5' } });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Move' }));
    });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    await waitFor(() =>
      expect(within(place).getByRole('link', { name: 'nlp' }).getAttribute('href')).toBe('/workspaces/2'),
    );
    expect(within(place).getByRole('link', { name: 'bert' })).toBeTruthy();
    const post = fake.calls.find((c) => c.init?.method === 'POST')!;
    expect([post.url, JSON.parse(String(post.init?.body))]).toEqual(['/api/v1/experiments/1/move', { project_id: 5 }]);
  });

  it("keeps the master's refusal of one experiment in the dialog", async () => {
    master('admin');
    signIn();
    render(<ExperimentPage id={1} />);
    // The project was archived since the dialog read it.
    fireEvent.click(await screen.findByRole('button', { name: 'Move experiment 1 to another project' }));
    const dialog = screen.getByRole('dialog');
    const select = within(dialog).getByLabelText('Project') as HTMLSelectElement;
    await waitFor(() => expect(select.options.length).toBe(4));
    fireEvent.change(select, { target: { value: '8' } });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Move' }));
    });
    expect((await within(dialog).findByRole('alert')).textContent).toBe(
      'project "frozen" or its workspace is archived',
    );
  });

  it("offers no Move on someone else's experiment", async () => {
    master('alice');
    signIn({ username: 'bob', role: 'user' });
    render(<ExperimentPage id={1} />);
    await screen.findByText('Project');
    expect(screen.queryByRole('button', { name: /^Move experiment/ })).toBeNull();
  });
});
