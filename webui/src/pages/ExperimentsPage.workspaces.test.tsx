import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { experiment, fakeFetch, json, project, signIn, workspace } from '../test/fixtures';
import { render } from '../test/render';
import { ExperimentsPage } from './ExperimentsPage';

function list(experiments: ReturnType<typeof experiment>[]) {
  return { experiments, total: experiments.length, facets: { owners: ['admin'], labels: [] } };
}

const nlp = workspace({ id: 2, name: 'nlp', members: [{ username: 'admin', role: 'ADMIN' }] });
const bert = project({ id: 5, workspace_id: 2, workspace: 'nlp', name: 'bert' });
const places = {
  '/api/v1/workspaces/1/projects': () => json({ projects: [project()], total: 1 }),
  '/api/v1/workspaces/2/projects': () =>
    json({ projects: [bert, project({ id: 6, workspace_id: 2, name: 'old', archived: true })], total: 2 }),
  '/api/v1/workspaces': () =>
    json({ workspaces: [workspace(), nlp, workspace({ id: 3, name: 'gone', archived: true })], total: 3 }),
};

describe('ExperimentsPage and workspaces', () => {
  beforeEach(() => {
    window.history.replaceState(null, '', '/experiments');
    signIn();
  });

  it('filters by workspace and project through the URL and the API, and shows each project', async () => {
    const fake = fakeFetch({
      ...places,
      '/api/v1/experiments': () =>
        json(
          list([
            experiment(),
            experiment({ id: 2, name: 'bert-base', project_id: 5, project: 'bert', workspace_id: 2, workspace: 'nlp' }),
          ]),
        ),
    });
    vi.stubGlobal('fetch', fake.fn);
    render(<ExperimentsPage />);
    const row = (await screen.findByText('bert-base')).closest('tr')!;
    const place = within(row).getByRole('link', { name: 'nlp / bert' });
    expect(place.getAttribute('href')).toBe('/experiments?workspace_id=2&project_id=5');
    expect(
      within(screen.getByText('quadratic-grid').closest('tr')!).getByRole('link', {
        name: 'Uncategorized / Uncategorized',
      }),
    ).toBeTruthy();

    const projectFilter = screen.getByLabelText('Project') as HTMLSelectElement;
    expect(projectFilter.disabled).toBe(true);
    const workspaceFilter = screen.getByLabelText('Workspace') as HTMLSelectElement;
    await waitFor(() => expect(workspaceFilter.options.length).toBe(4));
    fireEvent.change(workspaceFilter, { target: { value: '2' } });
    await waitFor(() => expect(fake.calls.at(-1)!.url).toContain('workspace_id=2'));
    expect(window.location.search).toBe('?workspace_id=2');
    await waitFor(() =>
      expect(Array.from(projectFilter.options).map((o) => o.textContent)).toEqual([
        'Any project',
        'bert',
        'old (archived)',
      ]),
    );
    fireEvent.change(projectFilter, { target: { value: '5' } });
    await waitFor(() => expect(window.location.search).toBe('?workspace_id=2&project_id=5'));
    await waitFor(() =>
      expect(
        fake.calls.some(
          (c) => c.url.startsWith('/api/v1/experiments?') && c.url.includes('workspace_id=2&project_id=5'),
        ),
      ).toBe(true),
    );
    // Another workspace forgets the project.
    fireEvent.change(workspaceFilter, { target: { value: '1' } });
    await waitFor(() => expect(window.location.search).toBe('?workspace_id=1'));
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => expect(window.location.search).toBe(''));
  });

  it('reads a project filter from a link', async () => {
    window.history.replaceState(null, '', '/experiments?workspace_id=2&project_id=5');
    const fake = fakeFetch({ ...places, '/api/v1/experiments': () => json(list([])) });
    vi.stubGlobal('fetch', fake.fn);
    render(<ExperimentsPage />);
    expect(await screen.findByText('No experiment matches these filters.')).toBeTruthy();
    expect(fake.calls.find((c) => c.url.startsWith('/api/v1/experiments'))!.url).toContain(
      'workspace_id=2&project_id=5',
    );
    await waitFor(() =>
      expect((screen.getByLabelText('Project') as HTMLSelectElement).selectedOptions[0].textContent).toBe('bert'),
    );
  });

  it('moves the selected experiments to a project and lists the ones the master refused', async () => {
    const fake = fakeFetch({
      ...places,
      '/api/v1/experiments/1/move': () =>
        json({ id: 1, project_id: 5, project: 'bert', workspace_id: 2, workspace: 'nlp' }),
      '/api/v1/experiments/2/move': () =>
        json({ error: { code: 'permission_denied', message: 'experiment 2 belongs to alice' } }, 403),
      '/api/v1/experiments': () => json(list([experiment(), experiment({ id: 2, name: 'theirs', owner: 'alice' })])),
    });
    vi.stubGlobal('fetch', fake.fn);
    render(<ExperimentsPage />);
    await screen.findByText('theirs');
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select every experiment on this page' }));
    const bar = screen.getByRole('toolbar', { name: 'Act on the selected experiments' });
    fireEvent.click(within(bar).getByRole('button', { name: 'Move' }));
    const dialog = screen.getByRole('dialog', { name: 'Move 2 experiments (1, 2) to another project' });
    const select = within(dialog).getByLabelText('Project') as HTMLSelectElement;
    // Projects that take experiments, grouped by workspace: not archived ones.
    await waitFor(() =>
      expect(Array.from(select.querySelectorAll('optgroup')).map((g) => g.label)).toEqual(['Uncategorized', 'nlp']),
    );
    expect(Array.from(select.options).map((o) => o.textContent)).toEqual([
      'Choose a project',
      'Uncategorized / Uncategorized',
      'nlp / bert',
    ]);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Move' }));
    expect(within(dialog).getByRole('alert').textContent).toBe('Choose the project to move to.');
    fireEvent.change(select, { target: { value: '5' } });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Move' }));
    });
    expect(
      await screen.findByText('Move to nlp / bert: done for 1 experiment; could not move 1 experiment.'),
    ).toBeTruthy();
    const failures = screen.getByRole('alert');
    expect(
      within(failures)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['Experiment 2: Not allowed: experiment 2 belongs to alice']);
    const posts = fake.calls.filter((c) => c.init?.method === 'POST');
    expect(posts.map((c) => [c.url, JSON.parse(String(c.init?.body))])).toEqual([
      ['/api/v1/experiments/1/move', { project_id: 5 }],
      ['/api/v1/experiments/2/move', { project_id: 5 }],
    ]);
    expect(screen.queryByRole('dialog')).toBeNull();
  });
});
