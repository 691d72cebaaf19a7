import { fireEvent, screen, waitFor } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { describe, expect, it, vi } from 'vitest';
import { experiment, fakeFetch, json, project, signIn, workspace } from '../test/fixtures';
import { render } from '../test/render';
import { ForkPage } from './ForkPage';

vi.mock('../components/YamlEditor', () => import('../test/RecordingYamlEditor'));

describe('ForkPage project', () => {
  it("forks into its parent's project unless another is chosen", async () => {
    const fake = fakeFetch({
      '/api/v1/templates': () => json({ templates: [], total: 0 }),
      '/api/v1/experiments/check': () => json({ valid: true, errors: [], warnings: [] }),
      '/api/v1/experiments/1': () =>
        json(experiment({ project_id: 5, project: 'bert', workspace_id: 2, workspace: 'nlp' })),
      '/api/v1/experiments': () => json({ id: 7, warnings: [] }, 201),
      '/api/v1/workspaces/1/projects': () => json({ projects: [project()], total: 1 }),
      '/api/v1/workspaces/2/projects': () =>
        json({ projects: [project({ id: 5, workspace_id: 2, workspace: 'nlp', name: 'bert' })], total: 1 }),
      '/api/v1/workspaces': () => json({ workspaces: [workspace(), workspace({ id: 2, name: 'nlp' })], total: 2 }),
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    window.history.replaceState(null, '', '/experiments/1/fork');
    render(
      <Routes>
        <Route path="/experiments/1/fork" element={<ForkPage id={1} />} />
        <Route path="/experiments/:id" element={<p>experiment page</p>} />
      </Routes>,
    );
    const select = (await screen.findByLabelText('Project')) as HTMLSelectElement;
    await waitFor(() => expect(select.options.length).toBe(2));
    expect(select.selectedOptions[0].textContent).toBe('nlp / bert (its parent’s)');
    fireEvent.click(screen.getByRole('button', { name: 'Check' }));
    await screen.findByText('The master found no problem in this config.');
    fireEvent.change(select, { target: { value: '1' } });
    fireEvent.click(screen.getByRole('button', { name: 'Check' }));
    await waitFor(() => expect(fake.calls.filter((c) => c.url === '/api/v1/experiments/check')).toHaveLength(2));
    fireEvent.click(screen.getByRole('button', { name: 'Create fork' }));
    expect(await screen.findByText('experiment page')).toBeTruthy();
    const bodies = (url: string) =>
      fake.calls.filter((c) => c.url === url && c.init?.method === 'POST').map((c) => JSON.parse(String(c.init?.body)));
    const [plain, other] = bodies('/api/v1/experiments/check');
    expect(plain.project_id).toBeUndefined();
    expect(other.project_id).toBe(1);
    expect(bodies('/api/v1/experiments')[0]).toMatchObject({ forked_from: 1, project_id: 1 });
  });
});
