import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { render } from '../test/render';
import { describe, expect, it, vi } from 'vitest';
import type { Shell } from '../api/types';
import { fakeFetch, json, signIn } from '../test/fixtures';
import { ShellsPage } from './ShellsPage';

vi.mock('../components/TerminalView', () => import('../test/RecordingTerminalView'));

function shell(id: number, over: Partial<Shell> = {}): Shell {
  return {
    id,
    kind: 'SHELL',
    owner: 'ada',
    description: '',
    argv: ['/bin/sh', '-c', 'exec "${SHELL:-/bin/sh}" -l'],
    slots: 1,
    resource_pool: 'default',
    priority: 42,
    preemptible: false,
    has_context: false,
    created_at: '2026-03-01T10:00:00.000Z',
    ended_at: null,
    state: 'RUNNING',
    allocation_id: `shell-${id}.0`,
    end_cause: null,
    exit_reason: null,
    exit_code: null,
    pending_reason: null,
    idle_timeout_s: null,
    service: null,
    ...over,
  };
}

// A master holding shells in memory: GET lists them, POST starts one (kept
// PENDING), kill ends one, and each ticket is new.
function master(initial: Shell[], ticketAnswer?: () => Response) {
  const shells = [...initial];
  let tickets = 0;
  const fake = fakeFetch({
    '/api/v1/shells/': (url) => {
      const id = Number(url.split('/')[4]);
      if (url.endsWith('/terminal/ticket')) {
        if (ticketAnswer) return ticketAnswer();
        tickets += 1;
        return json({ ticket: `ticket-${tickets}`, expires_in_s: 60 });
      }
      const s = shells.find((x) => x.id === id)!;
      if (url.endsWith('/kill')) {
        Object.assign(s, {
          state: 'TERMINATED',
          ended_at: '2026-03-01T11:00:00.000Z',
          end_cause: 'USER_KILL',
          exit_reason: 'killed by its owner',
        });
      }
      return json(s);
    },
    '/api/v1/shells': (_url, init) => {
      if (init?.method === 'POST') {
        const body = JSON.parse(String(init.body));
        const s = shell(shells.length + 1, {
          slots: body.slots,
          resource_pool: body.resource_pool ?? 'default',
          state: 'PENDING',
          allocation_id: null,
          pending_reason: 'needs 2 slots on one agent (it is one process); largest free block in pool default is 1',
        });
        shells.unshift(s);
        return json(s, 201);
      }
      return json({ shells, total: shells.length });
    },
  });
  return { ...fake, shells };
}

function row(id: number) {
  return document.querySelector(`tr[data-task="${id}"]`) as HTMLElement;
}

function posts(calls: { url: string; init?: RequestInit }[], suffix: string) {
  return calls.filter((c) => c.init?.method === 'POST' && c.url.endsWith(suffix));
}

describe('ShellsPage', () => {
  it('lists shells with their state, slots, pool, why they wait and, for admins, their owner', async () => {
    signIn();
    const m = master([
      shell(3, {
        state: 'PENDING',
        allocation_id: 'shell-3.0',
        slots: 2,
        pending_reason: 'needs 2 slots on one agent',
      }),
      shell(2, { owner: 'bob', resource_pool: 'gpu' }),
      shell(1, {
        state: 'TERMINATED',
        ended_at: '2026-03-01T10:05:00.000Z',
        end_cause: 'FAILED',
        exit_code: 3,
        exit_reason: 'exited 3',
      }),
    ]);
    vi.stubGlobal('fetch', m.fn);
    render(<ShellsPage />);
    expect(await screen.findByText('2 running or waiting, 1 ended')).toBeTruthy();
    expect(within(row(3)).getByText('needs 2 slots on one agent')).toBeTruthy();
    expect(within(row(3)).getByText('2')).toBeTruthy();
    expect(within(row(2)).getByText('gpu')).toBeTruthy();
    expect(within(row(2)).getByText('bob')).toBeTruthy();
    expect(within(row(1)).getByText('exited 3 (exit code 3)')).toBeTruthy();
    expect(screen.getByRole('columnheader', { name: 'Owner' })).toBeTruthy();
    // A waiting shell cannot be opened yet; an ended one offers nothing.
    expect((within(row(3)).getByRole('button', { name: 'Open shell 3' }) as HTMLButtonElement).disabled).toBe(true);
    expect((within(row(2)).getByRole('button', { name: 'Open shell 2' }) as HTMLButtonElement).disabled).toBe(false);
    expect(within(row(1)).queryByRole('button')).toBeNull();
  });

  it('shows no owner column to a user who is not an admin', async () => {
    signIn({ username: 'ada', role: 'user', token: 'tok-ada' });
    vi.stubGlobal('fetch', master([shell(1)]).fn);
    render(<ShellsPage />);
    await screen.findByText('1 running or waiting, 0 ended');
    expect(screen.queryByRole('columnheader', { name: 'Owner' })).toBeNull();
    expect(screen.getByRole('heading', { name: 'Your shells' })).toBeTruthy();
  });

  it('starts a shell with the slots and pool asked for', async () => {
    signIn();
    const m = master([]);
    vi.stubGlobal('fetch', m.fn);
    render(<ShellsPage />);
    await screen.findByText('No shells yet.');
    fireEvent.change(screen.getByLabelText('Slots'), { target: { value: 'two' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Start shell' }));
    });
    expect(screen.getByRole('alert').textContent).toContain('Slots must be a whole number');
    expect(posts(m.calls, '/api/v1/shells')).toHaveLength(0);
    fireEvent.change(screen.getByLabelText('Slots'), { target: { value: '2' } });
    fireEvent.change(screen.getByLabelText('Pool'), { target: { value: 'default' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Start shell' }));
    });
    expect(await screen.findByText('Started shell 1.')).toBeTruthy();
    expect(JSON.parse(String(posts(m.calls, '/api/v1/shells')[0].init?.body))).toEqual({
      slots: 2,
      resource_pool: 'default',
    });
    await waitFor(() => expect(row(1)).toBeTruthy());
    expect(within(row(1)).getByText(/largest free block/)).toBeTruthy();
  });

  it('opens the terminal in the page with a fresh ticket each time, and closes it', async () => {
    signIn();
    const m = master([shell(7)]);
    vi.stubGlobal('fetch', m.fn);
    render(<ShellsPage />);
    await waitFor(() => expect(row(7)).toBeTruthy());
    await act(async () => {
      fireEvent.click(within(row(7)).getByRole('button', { name: 'Open shell 7' }));
    });
    const terminal = await screen.findByTestId('terminal');
    expect(terminal.getAttribute('data-path')).toBe('/api/v1/shells/7/terminal');
    expect(terminal.getAttribute('data-ticket')).toBe('ticket-1');
    expect(screen.getByRole('heading', { name: 'Terminal of shell 7' })).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Close terminal' }));
    expect(screen.queryByTestId('terminal')).toBeNull();
    await act(async () => {
      fireEvent.click(within(row(7)).getByRole('button', { name: 'Open shell 7' }));
    });
    expect((await screen.findByTestId('terminal')).getAttribute('data-ticket')).toBe('ticket-2');
    expect(posts(m.calls, '/terminal/ticket')).toHaveLength(2);
  });

  it('says why a ticket was refused', async () => {
    signIn({ username: 'bob', role: 'user', token: 'tok-bob' });
    const m = master([shell(7)], () =>
      json({ error: { code: 'permission_denied', message: 'shell 7 belongs to ada' } }, 403),
    );
    vi.stubGlobal('fetch', m.fn);
    render(<ShellsPage />);
    await waitFor(() => expect(row(7)).toBeTruthy());
    await act(async () => {
      fireEvent.click(within(row(7)).getByRole('button', { name: 'Open shell 7' }));
    });
    expect((await screen.findByRole('alert')).textContent).toBe('Not allowed: shell 7 belongs to ada');
    expect(screen.queryByTestId('terminal')).toBeNull();
  });

  it('kills a shell after asking, and closes its terminal', async () => {
    signIn();
    const m = master([shell(7)]);
    vi.stubGlobal('fetch', m.fn);
    render(<ShellsPage />);
    await waitFor(() => expect(row(7)).toBeTruthy());
    await act(async () => {
      fireEvent.click(within(row(7)).getByRole('button', { name: 'Open shell 7' }));
    });
    await screen.findByTestId('terminal');
    fireEvent.click(within(row(7)).getByRole('button', { name: 'Kill shell 7' }));
    const dialog = screen.getByRole('dialog');
    expect(posts(m.calls, '/kill')).toHaveLength(0);
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Kill shell' }));
    });
    expect(posts(m.calls, '/api/v1/shells/7/kill')).toHaveLength(1);
    await waitFor(() => expect(row(7).getAttribute('data-state')).toBe('TERMINATED'));
    expect(screen.queryByTestId('terminal')).toBeNull();
    expect(within(row(7)).getByText('killed by its owner')).toBeTruthy();
  });

  it('shows the master’s error when the list cannot be read', async () => {
    signIn();
    vi.stubGlobal(
      'fetch',
      fakeFetch({ '/api/v1/shells': () => json({ error: { code: 'internal', message: 'disk on fire' } }, 500) }).fn,
    );
    render(<ShellsPage />);
    expect((await screen.findByRole('alert')).textContent).toContain('Could not load shells. disk on fire');
  });
});
