import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { render } from '../test/render';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Notebook } from '../api/types';
import { fakeFetch, json, signIn } from '../test/fixtures';
import { NotebooksPage } from './NotebooksPage';

function notebook(id: number, over: Partial<Notebook> = {}): Notebook {
  return {
    id,
    kind: 'NOTEBOOK',
    owner: 'ada',
    description: '',
    argv: ['python3', '-m', 'ring_notebook'],
    slots: 1,
    resource_pool: 'default',
    priority: 42,
    preemptible: false,
    has_context: false,
    created_at: '2026-03-01T10:00:00.000Z',
    ended_at: null,
    state: 'RUNNING',
    allocation_id: `notebook-${id}.0`,
    end_cause: null,
    exit_reason: null,
    exit_code: null,
    pending_reason: null,
    idle_timeout_s: null,
    service: { port: 8888, name: 'jupyter', url: `http://127.0.0.1:9999/proxy/${id}/` },
    notebook_idle_type: 'kernels_or_terminals',
    ...over,
  };
}

function master(initial: Notebook[], link?: (id: number) => Response) {
  const notebooks = [...initial];
  const fake = fakeFetch({
    '/api/v1/tasks/': (url) => {
      const id = Number(url.split('/')[4]);
      if (link) return link(id);
      return json({
        task_id: id,
        url: `http://127.0.0.1:9999/proxy-ticket/t-${id}`,
        proxy_url: `http://127.0.0.1:9999/proxy/${id}/`,
        expires_in_seconds: 60,
        service: { port: 8888, name: 'jupyter' },
        last_activity: null,
      });
    },
    '/api/v1/notebooks/': (url) => {
      const n = notebooks.find((x) => x.id === Number(url.split('/')[4]))!;
      if (url.endsWith('/kill')) Object.assign(n, { state: 'TERMINATED', ended_at: '2026-03-01T11:00:00.000Z' });
      return json(n);
    },
    '/api/v1/notebooks': (_url, init) => {
      if (init?.method === 'POST') {
        const body = JSON.parse(String(init.body));
        const n = notebook(notebooks.length + 1, { slots: body.slots, state: 'PENDING', service: null });
        notebooks.unshift(n);
        return json(n, 201);
      }
      return json({ notebooks, total: notebooks.length });
    },
  });
  return { ...fake, notebooks };
}

function row(id: number) {
  return document.querySelector(`tr[data-task="${id}"]`) as HTMLElement;
}

describe('NotebooksPage', () => {
  afterEach(() => vi.restoreAllMocks());

  it('lists notebooks and opens one only once it runs and its Jupyter has announced itself', async () => {
    signIn({ username: 'ada', role: 'user', token: 'tok-ada' });
    const m = master([
      notebook(3, { state: 'PENDING', service: null, pending_reason: 'needs 1 slot on one agent' }),
      notebook(2, { service: null }),
      notebook(1),
    ]);
    vi.stubGlobal('fetch', m.fn);
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    render(<NotebooksPage />);
    expect(await screen.findByText('3 running or waiting, 0 ended')).toBeTruthy();
    expect(within(row(3)).getByText('needs 1 slot on one agent')).toBeTruthy();
    const button = (id: number) =>
      within(row(id)).getByRole('button', { name: `Open notebook ${id}` }) as HTMLButtonElement;
    expect(button(3).disabled).toBe(true);
    expect(button(2).disabled).toBe(true);
    expect(button(2).title).toBe('Jupyter is starting');
    expect(button(1).disabled).toBe(false);
    await act(async () => {
      fireEvent.click(button(1));
    });
    expect(m.calls.filter((c) => c.init?.method === 'POST').map((c) => c.url)).toEqual(['/api/v1/tasks/1/proxy/link']);
    expect(open).toHaveBeenCalledWith('http://127.0.0.1:9999/proxy-ticket/t-1', '_blank', 'noopener,noreferrer');
    expect(screen.getByRole('link', { name: 'open notebook' }).getAttribute('href')).toBe(
      'http://127.0.0.1:9999/proxy-ticket/t-1',
    );
  });

  it('says why a link was refused', async () => {
    signIn({ username: 'bob', role: 'user', token: 'tok-bob' });
    const m = master([notebook(1)], () =>
      json({ error: { code: 'permission_denied', message: 'task 1 belongs to ada' } }, 403),
    );
    vi.stubGlobal('fetch', m.fn);
    const open = vi.spyOn(window, 'open').mockReturnValue(null);
    render(<NotebooksPage />);
    await waitFor(() => expect(row(1)).toBeTruthy());
    await act(async () => {
      fireEvent.click(within(row(1)).getByRole('button', { name: 'Open notebook 1' }));
    });
    expect((await screen.findByRole('alert')).textContent).toBe('Not allowed: task 1 belongs to ada');
    expect(open).not.toHaveBeenCalled();
  });

  it('starts and kills a notebook', async () => {
    signIn();
    const m = master([]);
    vi.stubGlobal('fetch', m.fn);
    render(<NotebooksPage />);
    await screen.findByText('No notebooks yet.');
    fireEvent.change(screen.getByLabelText('Slots'), { target: { value: '0' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Start notebook' }));
    });
    expect(await screen.findByText('Started notebook 1.')).toBeTruthy();
    const start = m.calls.find((c) => c.init?.method === 'POST' && c.url === '/api/v1/notebooks')!;
    expect(JSON.parse(String(start.init?.body))).toEqual({ slots: 0 });
    await waitFor(() => expect(row(1)).toBeTruthy());
    fireEvent.click(within(row(1)).getByRole('button', { name: 'Kill notebook 1' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Kill notebook' }));
    });
    await waitFor(() => expect(row(1).getAttribute('data-state')).toBe('TERMINATED'));
  });

  it('says so when the master has no notebooks', async () => {
    signIn();
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/notebooks': () => json({ error: { code: 'not_found', message: 'no route' } }, 404),
      }).fn,
    );
    render(<NotebooksPage />);
    expect((await screen.findByRole('alert')).textContent).toContain(
      'Could not load notebooks. this master does not run notebooks',
    );
    expect(screen.queryByRole('button', { name: 'Start notebook' })).toBeNull();
  });
});
