import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { Workspace } from '../api/types';
import { fakeFetch, json, signIn, workspace } from '../test/fixtures';
import { render } from '../test/render';
import { WorkspacesPage, archivedToSearch, parseArchived } from './WorkspacesPage';

describe('WorkspacesPage', () => {
  it('keeps the archived filter in the URL', () => {
    expect(parseArchived('')).toBe('hide');
    expect(parseArchived('?archived=true')).toBe('show');
    expect(parseArchived('?archived=only')).toBe('only');
    expect(archivedToSearch('hide')).toBe('');
    expect(archivedToSearch('only')).toBe('?archived=only');
  });

  it('lists workspaces; an admin creates one, the refusal of a name shown at the name', async () => {
    const all: Workspace[] = [
      workspace(),
      workspace({
        id: 2,
        name: 'nlp',
        description: 'language models',
        members: [
          { username: 'admin', role: 'ADMIN' },
          { username: 'bob', role: 'MEMBER' },
        ],
        pools: [
          { pool: 'gpu', default: true },
          { pool: 'cpu', default: false },
        ],
        num_projects: 3,
      }),
    ];
    const fake = fakeFetch({
      '/api/v1/workspaces': (url, init) => {
        if (init?.method === 'POST') {
          const body = JSON.parse(String(init.body));
          if (all.some((w) => w.name === body.name))
            return json({ error: { code: 'conflict', message: `workspace "${body.name}" exists already` } }, 409);
          const created = workspace({ id: 3, ...body, members: [{ username: 'admin', role: 'ADMIN' }] });
          all.push(created);
          return json(created, 201);
        }
        const archived = new URL(url, 'http://x').searchParams.get('archived');
        const shown = all.filter((w) => archived === null || String(w.archived) === archived);
        return json({ workspaces: shown, total: shown.length });
      },
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    window.history.replaceState(null, '', '/workspaces');
    render(<WorkspacesPage />);

    const row = (await screen.findByRole('link', { name: 'nlp' })).closest('tr')!;
    expect(row.textContent).toContain('language models');
    expect(row.textContent).toContain('2 members');
    expect(row.textContent).toContain('gpu (default)');
    expect(within(row).getAllByRole('cell')[4].textContent).toBe('3');
    expect(screen.getByRole('link', { name: 'nlp' }).getAttribute('href')).toBe('/workspaces/2');
    const first = screen.getByRole('link', { name: 'Uncategorized' }).closest('tr')!;
    expect(first.textContent).toContain('everyone');
    expect(first.textContent).toContain('default');
    expect(fake.calls[0].url).toBe('/api/v1/workspaces?archived=false');

    fireEvent.change(screen.getByLabelText('Archived'), { target: { value: 'only' } });
    await waitFor(() => expect(fake.calls.at(-1)!.url).toBe('/api/v1/workspaces?archived=true'));
    expect(window.location.search).toBe('?archived=only');
    expect(await screen.findByText('No archived workspace.')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Archived'), { target: { value: 'hide' } });
    await screen.findByRole('link', { name: 'nlp' });

    const form = screen.getByRole('form', { name: 'Create a workspace' });
    const name = within(form).getByLabelText('Name');
    fireEvent.change(name, { target: { value: 'nlp' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create workspace' }));
    const refusal = await within(form).findByRole('alert');
    expect(refusal.textContent).toBe('workspace "nlp" exists already');
    expect(name.getAttribute('aria-invalid')).toBe('true');
    expect(name.getAttribute('aria-describedby')).toBe(refusal.id);

    fireEvent.change(name, { target: { value: 'vision' } });
    fireEvent.change(within(form).getByLabelText('Description'), { target: { value: 'images' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Create workspace' }));
    const status = await within(form).findByRole('status');
    expect(status.textContent).toContain('Created vision');
    expect(name.getAttribute('aria-invalid')).toBeNull();
    const post = fake.calls.filter((c) => c.init?.method === 'POST').at(-1)!;
    expect(JSON.parse(String(post.init?.body))).toEqual({ name: 'vision', description: 'images' });
    const table = screen.getByRole('region', { name: 'Workspaces table' });
    expect(await within(table).findByRole('link', { name: 'vision' })).toBeTruthy();
    expect(within(status).getByRole('link', { name: 'vision' }).getAttribute('href')).toBe('/workspaces/3');
  });

  it('offers a user who is not an admin no form', async () => {
    vi.stubGlobal('fetch', fakeFetch({ '/api/v1/workspaces': () => json({ workspaces: [workspace()], total: 1 }) }).fn);
    signIn({ username: 'bob', role: 'user' });
    render(<WorkspacesPage />);
    await screen.findByRole('link', { name: 'Uncategorized' });
    expect(screen.queryByRole('form', { name: 'Create a workspace' })).toBeNull();
    expect(screen.getByText(/Admins create workspaces/)).toBeTruthy();
  });
});
