import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { Route, Routes } from 'react-router';
import { describe, expect, it, vi } from 'vitest';
import type { Project, Workspace } from '../api/types';
import { fakeFetch, json, pool, project, signIn, workspace } from '../test/fixtures';
import { render } from '../test/render';
import { WorkspacePage } from './WorkspacePage';

const refusal = (status: number, message: string) =>
  json({ error: { code: status === 409 ? 'conflict' : 'invalid_argument', message } }, status);

// A master holding workspace 2 (nlp) with two projects, its members and pools.
function master() {
  const ws: Workspace = workspace({
    id: 2,
    name: 'nlp',
    description: 'language models',
    members: [
      { username: 'admin', role: 'ADMIN' },
      { username: 'bob', role: 'MEMBER' },
    ],
    pools: [{ pool: 'cpu', default: true }],
    num_projects: 2,
  });
  const projects: Project[] = [
    project({ id: 5, workspace_id: 2, workspace: 'nlp', name: 'bert', num_experiments: 3, created_by: 'admin' }),
    project({ id: 6, workspace_id: 2, workspace: 'nlp', name: 'scratch', created_by: 'bob' }),
  ];
  const fake = fakeFetch({
    '/api/v1/pools': () =>
      json({ pools: [pool({ name: 'cpu' }), pool({ name: 'gpu' }), pool({ name: 'joined', configured: false })] }),
    '/api/v1/projects/': (url, init) => {
      const id = Number(url.split('/').pop());
      const p = projects.find((x) => x.id === id)!;
      if (init?.method === 'DELETE') {
        if (p.num_experiments > 0) return refusal(409, `project "${p.name}" holds experiments`);
        projects.splice(projects.indexOf(p), 1);
        return json({ id, deleted: true });
      }
      Object.assign(p, JSON.parse(String(init?.body)));
      return json(p);
    },
    '/api/v1/workspaces/2/projects': (_url, init) => {
      if (init?.method === 'POST') {
        const body = JSON.parse(String(init.body));
        if (projects.some((p) => p.name === body.name))
          return refusal(409, `the workspace has a project "${body.name}" already`);
        const p = project({ id: 7, workspace_id: 2, workspace: 'nlp', ...body });
        projects.push(p);
        return json(p, 201);
      }
      return json({ projects, total: projects.length });
    },
    '/api/v1/workspaces/2/members/': (url, init) => {
      const username = decodeURIComponent(url.split('/').pop()!);
      if (init?.method === 'DELETE') ws.members = ws.members.filter((m) => m.username !== username);
      else {
        if (username === 'eve') return refusal(400, 'no user named "eve"');
        const { role } = JSON.parse(String(init?.body));
        ws.members = [...ws.members.filter((m) => m.username !== username), { username, role }];
      }
      return json(ws);
    },
    '/api/v1/workspaces/2/pools/': (url, init) => {
      const name = decodeURIComponent(url.split('/').pop()!);
      if (init?.method === 'DELETE') ws.pools = ws.pools.filter((p) => p.pool !== name);
      else {
        const { default: isDefault } = JSON.parse(String(init?.body));
        ws.pools = [
          ...ws.pools.filter((p) => p.pool !== name).map((p) => (isDefault ? { ...p, default: false } : p)),
          { pool: name, default: isDefault },
        ];
      }
      return json(ws);
    },
    '/api/v1/workspaces/2': (_url, init) => {
      if (init?.method === 'PATCH') Object.assign(ws, JSON.parse(String(init.body)));
      if (init?.method === 'DELETE') return json({ id: 2, deleted: true });
      return json(ws);
    },
  });
  vi.stubGlobal('fetch', fake.fn);
  return { ws, projects, fake };
}

function show() {
  window.history.replaceState(null, '', '/workspaces/2');
  return render(
    <Routes>
      <Route path="/workspaces/2" element={<WorkspacePage id={2} />} />
      <Route path="/workspaces" element={<p>workspaces page</p>} />
    </Routes>,
  );
}

const sent = (fake: ReturnType<typeof fakeFetch>, method: string) =>
  fake.calls
    .filter((c) => c.init?.method === method)
    .map((c) => [c.url, c.init?.body ? JSON.parse(String(c.init.body)) : null]);

describe('WorkspacePage', () => {
  it('lists its projects with links to their experiments; creates, archives and deletes one', async () => {
    const { fake } = master();
    signIn();
    show();
    const projects = await screen.findByRole('region', { name: 'Projects table' });
    const bert = within(projects).getByRole('link', { name: 'bert' });
    expect(bert.getAttribute('href')).toBe('/experiments?workspace_id=2&project_id=5');
    const bertRow = bert.closest('tr')!;
    expect(within(bertRow).getAllByRole('cell')[2].textContent).toBe('3');
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('nlp');
    expect(screen.getByText('language models')).toBeTruthy();

    // A project holding experiments cannot be deleted, and the button says why.
    const deleteBert = within(bertRow).getByRole('button', { name: 'Delete project bert' }) as HTMLButtonElement;
    expect(deleteBert.disabled).toBe(true);
    expect(deleteBert.title).toBe('It holds 3 experiments: move or delete them first.');
    // So the workspace cannot be either.
    const deleteWs = screen.getByRole('button', { name: 'Delete workspace nlp' }) as HTMLButtonElement;
    expect(deleteWs.disabled).toBe(true);
    expect(screen.getByText('Project bert holds experiments: move or delete them first.')).toBeTruthy();

    // Create: a taken name is refused at the name; then a new one.
    const form = screen.getByRole('form', { name: 'Create a project' });
    const name = within(form).getByLabelText('Project name');
    fireEvent.change(name, { target: { value: 'bert' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create project' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('the workspace has a project "bert" already');
    expect(name.getAttribute('aria-invalid')).toBe('true');
    fireEvent.change(name, { target: { value: 'gpt' } });
    fireEvent.change(within(form).getByLabelText('Project description'), { target: { value: 'decoders' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create project' }));
    expect((await within(form).findByRole('status')).textContent).toBe('Created project gpt.');
    expect(await within(projects).findByRole('link', { name: 'gpt' })).toBeTruthy();
    expect(sent(fake, 'POST')).toEqual([
      ['/api/v1/workspaces/2/projects', { name: 'bert', description: '' }],
      ['/api/v1/workspaces/2/projects', { name: 'gpt', description: 'decoders' }],
    ]);

    // Archive scratch, after confirming; then delete it.
    const scratchRow = within(projects).getByRole('link', { name: 'scratch' }).closest('tr')!;
    fireEvent.click(within(scratchRow).getByRole('button', { name: 'Archive project scratch' }));
    await act(async () => {
      fireEvent.click(
        within(screen.getByRole('dialog', { name: 'Archive project scratch?' })).getByRole('button', {
          name: 'Archive',
        }),
      );
    });
    await waitFor(() => expect(within(scratchRow).getByText('archived')).toBeTruthy());
    fireEvent.click(within(scratchRow).getByRole('button', { name: 'Delete project scratch' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    });
    await waitFor(() => expect(within(projects).queryByRole('link', { name: 'scratch' })).toBeNull());
    expect(sent(fake, 'PATCH')).toEqual([['/api/v1/projects/6', { archived: true }]]);
    expect(sent(fake, 'DELETE')).toEqual([['/api/v1/projects/6', null]]);
  });

  it("shows the master's 409 in the dialog", async () => {
    const { projects } = master();
    signIn();
    show();
    const table = await screen.findByRole('region', { name: 'Projects table' });
    // The page thinks scratch is empty; the master knows better.
    projects[1].num_experiments = 0;
    const row = within(table).getByRole('link', { name: 'scratch' }).closest('tr')!;
    projects[1].num_experiments = 1;
    fireEvent.click(within(row).getByRole('button', { name: 'Delete project scratch' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    });
    expect((await within(screen.getByRole('dialog')).findByRole('alert')).textContent).toBe(
      'project "scratch" holds experiments',
    );
  });

  it('adds a member with a role, changes a role and removes a member', async () => {
    const { fake } = master();
    signIn();
    show();
    const members = await screen.findByRole('region', { name: 'Members table' });
    expect(
      within(members)
        .getAllByRole('row')
        .map((r) => r.getAttribute('data-member')),
    ).toEqual([null, 'admin', 'bob']);
    const form = screen.getByRole('form', { name: 'Add a member' });
    const username = within(form).getByLabelText('Username');
    fireEvent.change(username, { target: { value: 'eve' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add member' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('no user named "eve"');
    expect(username.getAttribute('aria-invalid')).toBe('true');
    fireEvent.change(username, { target: { value: 'carol' } });
    fireEvent.change(within(form).getByLabelText('Role'), { target: { value: 'ADMIN' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add member' }));
    const carol = await within(members).findByText('carol');
    expect((within(carol.closest('tr')!).getByRole('combobox') as HTMLSelectElement).value).toBe('ADMIN');

    fireEvent.change(within(members).getByLabelText('Role of bob'), { target: { value: 'ADMIN' } });
    await waitFor(() =>
      expect((within(members).getByLabelText('Role of bob') as HTMLSelectElement).value).toBe('ADMIN'),
    );
    fireEvent.click(within(members).getByRole('button', { name: 'Remove bob from nlp' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Remove' }));
    });
    await waitFor(() => expect(within(members).queryByText('bob')).toBeNull());
    expect(sent(fake, 'PUT')).toEqual([
      ['/api/v1/workspaces/2/members/eve', { role: 'MEMBER' }],
      ['/api/v1/workspaces/2/members/carol', { role: 'ADMIN' }],
      ['/api/v1/workspaces/2/members/bob', { role: 'ADMIN' }],
    ]);
    expect(sent(fake, 'DELETE')).toEqual([['/api/v1/workspaces/2/members/bob', null]]);
  });

  it("binds one of master.yaml's pools as the default, and unbinds one", async () => {
    const { fake } = master();
    signIn();
    show();
    const pools = await screen.findByRole('region', { name: 'Pools table' });
    const form = screen.getByRole('form', { name: 'Bind a pool' });
    const select = within(form).getByLabelText('Pool') as HTMLSelectElement;
    // Only configured pools that are not bound yet.
    await waitFor(() => expect(Array.from(select.options).map((o) => o.value)).toEqual(['gpu']));
    fireEvent.click(within(form).getByRole('checkbox', { name: /Default pool/ }));
    fireEvent.click(within(form).getByRole('button', { name: 'Bind pool' }));
    const gpu = await within(pools).findByText('gpu');
    expect(gpu.closest('tr')!.textContent).toContain('yes');
    // Every configured pool is bound now: nothing left to offer.
    expect(await screen.findByText('Every pool of master.yaml is bound to this workspace.')).toBeTruthy();
    expect(screen.queryByRole('form', { name: 'Bind a pool' })).toBeNull();
    await waitFor(() => expect(within(pools).getByRole('button', { name: 'Make cpu the default pool' })).toBeTruthy());
    fireEvent.click(within(pools).getByRole('button', { name: 'Unbind pool cpu' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Unbind' }));
    });
    await waitFor(() => expect(within(pools).queryByText('cpu')).toBeNull());
    expect(await screen.findByRole('form', { name: 'Bind a pool' })).toBeTruthy();
    expect(sent(fake, 'PUT')).toEqual([['/api/v1/workspaces/2/pools/gpu', { default: true }]]);
    expect(sent(fake, 'DELETE')).toEqual([['/api/v1/workspaces/2/pools/cpu', null]]);
  });

  it('archives the workspace, and deletes it once its projects are empty', async () => {
    const { fake, projects } = master();
    projects[0].num_experiments = 0;
    signIn();
    show();
    fireEvent.click(await screen.findByRole('button', { name: 'Archive workspace nlp' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Archive' }));
    });
    expect(await screen.findByRole('button', { name: 'Unarchive workspace nlp' })).toBeTruthy();
    expect(await screen.findByText(/takes no new projects until it is unarchived/)).toBeTruthy();
    expect(screen.queryByRole('form', { name: 'Create a project' })).toBeNull();
    await waitFor(() =>
      expect((screen.getByRole('button', { name: 'Delete workspace nlp' }) as HTMLButtonElement).disabled).toBe(false),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Delete workspace nlp' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    });
    expect(await screen.findByText('workspaces page')).toBeTruthy();
    expect(sent(fake, 'PATCH')).toEqual([['/api/v1/workspaces/2', { archived: true }]]);
    expect(sent(fake, 'DELETE')).toEqual([['/api/v1/workspaces/2', null]]);
  });

  it('gives a MEMBER no member, pool or workspace controls, and changes only their own projects', async () => {
    master();
    signIn({ username: 'bob', role: 'user' });
    show();
    const projects = await screen.findByRole('region', { name: 'Projects table' });
    expect(screen.getByText('you: MEMBER')).toBeTruthy();
    expect(screen.queryByRole('button', { name: /workspace nlp/ })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Add a member' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Bind a pool' })).toBeNull();
    expect(screen.queryByLabelText('Role of bob')).toBeNull();
    expect(screen.getByText('Only an ADMIN of this workspace or a cluster admin changes its members.')).toBeTruthy();
    const bert = within(projects).getByRole('link', { name: 'bert' }).closest('tr')!;
    const archive = within(bert).getByRole('button', { name: 'Archive project bert' }) as HTMLButtonElement;
    expect(archive.disabled).toBe(true);
    expect(archive.title).toMatch(/Only its creator/);
    const scratch = within(projects).getByRole('link', { name: 'scratch' }).closest('tr')!;
    expect(
      (within(scratch).getByRole('button', { name: 'Archive project scratch' }) as HTMLButtonElement).disabled,
    ).toBe(false);
    expect(screen.getByRole('form', { name: 'Create a project' })).toBeTruthy();
  });

  it('says every user belongs to the default workspace, which is never archived', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/workspaces/1/projects': () => json({ projects: [project({ num_experiments: 4 })], total: 1 }),
        '/api/v1/workspaces/1': () => json(workspace()),
      }).fn,
    );
    signIn();
    window.history.replaceState(null, '', '/workspaces/1');
    render(<WorkspacePage id={1} />);
    expect(await screen.findByText(/Every user belongs to the default workspace/)).toBeTruthy();
    const archive = screen.getByRole('button', { name: 'Archive workspace Uncategorized' }) as HTMLButtonElement;
    expect(archive.disabled).toBe(true);
    expect(archive.title).toBe('The default workspace is never archived.');
    const row = (await screen.findByRole('region', { name: 'Projects table' })).querySelector('tr[data-project="1"]')!;
    expect(
      (within(row as HTMLElement).getByRole('button', { name: 'Delete project Uncategorized' }) as HTMLButtonElement)
        .title,
    ).toBe('The default project is never deleted.');
  });

  it('says so when the workspace is not there', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/workspaces/9': () => json({ error: { code: 'not_found', message: 'workspace 9 not found' } }, 404),
      }).fn,
    );
    signIn();
    render(<WorkspacePage id={9} />);
    expect((await screen.findByRole('alert')).textContent).toContain('workspace 9 not found');
  });
});
