import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { render } from '../test/render';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { experiment, fakeFetch, json, signIn } from '../test/fixtures';
import { ExperimentsPage } from './ExperimentsPage';

function list(experiments: ReturnType<typeof experiment>[], total = experiments.length) {
  return { experiments, total, facets: { owners: ['alice', 'default'], labels: ['demo', 'nlp'] } };
}

describe('ExperimentsPage', () => {
  beforeEach(() => {
    window.history.replaceState(null, '', '/experiments');
    signIn();
  });

  it('lists experiments with their state, progress, best metric and trials', async () => {
    const fake = fakeFetch({
      '/api/v1/experiments': () =>
        json(
          list(
            [experiment(), experiment({ id: 2, name: 'bert', state: 'COMPLETED', progress: 1, best_validation: null })],
            2,
          ),
        ),
    });
    vi.stubGlobal('fetch', fake.fn);
    render(<ExperimentsPage />);
    expect(screen.getByRole('status').textContent).toContain('Loading experiments');
    const row = await screen.findByText('quadratic-grid');
    const tr = row.closest('tr')!;
    expect(within(tr).getByText('Active')).toBeTruthy();
    expect(within(tr).getByRole('progressbar').getAttribute('aria-valuenow')).toBe('50');
    expect(within(tr).getByText('0.0123')).toBeTruthy();
    expect(within(tr).getByRole('button', { name: 'Pause experiment 1' })).toBeTruthy();
    expect(
      within(screen.getByText('bert').closest('tr')!).getByRole('button', { name: 'Archive experiment 2' }),
    ).toBeTruthy();
    expect(screen.getByRole('link', { name: 'quadratic-grid' }).getAttribute('href')).toBe('/experiments/1');
    expect(fake.calls.find((c) => c.url.startsWith('/api/v1/experiments'))?.url).toBe(
      '/api/v1/experiments?archived=false&sort=id&order=desc&limit=25&offset=0',
    );
  });

  it('filters and sorts through the URL and the API', async () => {
    const fake = fakeFetch({ '/api/v1/experiments': () => json(list([experiment()])) });
    vi.stubGlobal('fetch', fake.fn);
    render(<ExperimentsPage />);
    await screen.findByText('quadratic-grid');
    fireEvent.change(screen.getByLabelText('State'), { target: { value: 'PAUSED' } });
    await waitFor(() => expect(fake.calls.at(-1)!.url).toContain('state=PAUSED'));
    expect(window.location.search).toBe('?state=PAUSED');
    fireEvent.change(screen.getByLabelText('Label'), { target: { value: 'nlp' } });
    await waitFor(() => expect(fake.calls.at(-1)!.url).toContain('label=nlp'));
    fireEvent.click(screen.getByRole('button', { name: /Best validation/ }));
    await waitFor(() => expect(fake.calls.at(-1)!.url).toContain('sort=best_validation&order=asc'));
    expect(screen.getByRole('columnheader', { name: /Best validation/ }).getAttribute('aria-sort')).toBe('ascending');
  });

  it('says when there is nothing, and when nothing matches', async () => {
    vi.stubGlobal('fetch', fakeFetch({ '/api/v1/experiments': () => json(list([])) }).fn);
    render(<ExperimentsPage />);
    expect(await screen.findByText('No experiments yet.')).toBeTruthy();
  });

  it('shows an error with a retry', async () => {
    let fail = true;
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/experiments': () =>
          fail ? json({ error: { code: 'internal', message: 'database is locked' } }, 500) : json(list([experiment()])),
      }).fn,
    );
    render(<ExperimentsPage />);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('database is locked');
    fail = false;
    fireEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByText('quadratic-grid')).toBeTruthy();
  });

  it('kills an experiment only after confirmation', async () => {
    const fake = fakeFetch({
      '/api/v1/experiments/1/kill': () => json(experiment({ state: 'STOPPING_CANCELED' })),
      '/api/v1/experiments': () => json(list([experiment()])),
    });
    vi.stubGlobal('fetch', fake.fn);
    render(<ExperimentsPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'Kill experiment 1' }));
    const dialog = screen.getByRole('dialog', { name: 'Kill experiment 1 (quadratic-grid)?' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(fake.calls.some((c) => c.init?.method === 'POST')).toBe(false);
    fireEvent.click(screen.getByRole('button', { name: 'Kill experiment 1' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Kill' }));
    });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const post = fake.calls.find((c) => c.init?.method === 'POST')!;
    expect(post.url).toBe('/api/v1/experiments/1/kill');
    expect(screen.getByText(/experiment 1 is now stopping_canceled/)).toBeTruthy();
  });

  it("offers actions only on the user's own experiments, unless the user is an admin", async () => {
    signIn({ token: 'tok-bob', username: 'bob', role: 'user' });
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/experiments': () =>
          json(list([experiment({ id: 1, owner: 'alice' }), experiment({ id: 2, name: 'mine', owner: 'bob' })])),
      }).fn,
    );
    render(<ExperimentsPage />);
    const mine = (await screen.findByText('mine')).closest('tr')!;
    expect(within(mine).getByRole('button', { name: 'Kill experiment 2' })).toBeTruthy();
    const theirs = screen.getByText('quadratic-grid').closest('tr')!;
    expect(within(theirs).queryAllByRole('button')).toHaveLength(0);
  });

  it('shows a 403 from an action in the dialog', async () => {
    signIn({ token: 'tok-bob', username: 'bob', role: 'user' });
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/experiments/1/pause': () =>
          json({ error: { code: 'permission_denied', message: 'experiment 1 belongs to alice' } }, 403),
        '/api/v1/experiments': () => json(list([experiment({ owner: 'bob' })])),
      }).fn,
    );
    render(<ExperimentsPage />);
    fireEvent.click(await screen.findByRole('button', { name: 'Pause experiment 1' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Pause' }));
    });
    // The refusal comes back through a fetch and a state update, which a
    // busy machine may not finish within the act above: wait for it.
    const dialog = screen.getByRole('dialog');
    expect((await within(dialog).findByRole('alert')).textContent).toBe('Not allowed: experiment 1 belongs to alice');
  });

  it('archives the selected rows at once and lists the ones the master refused', async () => {
    const fake = fakeFetch({
      '/api/v1/experiments/1/archive': () =>
        json(
          { error: { code: 'conflict', message: 'experiment 1 is active; only ended experiments are archived' } },
          409,
        ),
      '/api/v1/experiments/2/archive': () => json(experiment({ id: 2, state: 'COMPLETED', archived: true })),
      '/api/v1/experiments': () =>
        json(
          list([
            experiment({ id: 1 }),
            experiment({ id: 2, name: 'bert', state: 'COMPLETED' }),
            experiment({ id: 3, name: 'gpt' }),
          ]),
        ),
    });
    vi.stubGlobal('fetch', fake.fn);
    render(<ExperimentsPage />);
    await screen.findByText('bert');
    expect(screen.queryByRole('toolbar')).toBeNull();
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select experiment 1' }));
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select experiment 2' }));
    const bar = screen.getByRole('toolbar', { name: 'Act on the selected experiments' });
    expect(bar.textContent).toContain('2 selected');
    fireEvent.click(within(bar).getByRole('button', { name: 'Archive' }));
    const dialog = screen.getByRole('dialog', { name: 'Archive 2 experiments (1, 2)?' });
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Archive' }));
    });
    expect(await screen.findByText('Archive: done for 1 experiment; could not archive 1 experiment.')).toBeTruthy();
    const failures = screen.getByRole('alert');
    expect(
      within(failures)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['Experiment 1: experiment 1 is active; only ended experiments are archived']);
    const posts = fake.calls.filter((c) => c.init?.method === 'POST').map((c) => c.url);
    expect(posts).toEqual(['/api/v1/experiments/1/archive', '/api/v1/experiments/2/archive']);
    // The selection is cleared, and the list read again.
    expect(screen.queryByRole('toolbar')).toBeNull();
    await waitFor(() => expect(fake.calls.filter((c) => c.url.startsWith('/api/v1/experiments?')).length).toBe(2));
  });

  it('selects every row of the page, and deletes through DELETE', async () => {
    const fake = fakeFetch({
      '/api/v1/experiments/': (url) => json({ id: Number(url.split('/').pop()), deleting: true }, 202),
      '/api/v1/experiments': () =>
        json(list([experiment({ id: 1, state: 'COMPLETED' }), experiment({ id: 2, name: 'bert', state: 'ERROR' })])),
    });
    vi.stubGlobal('fetch', fake.fn);
    render(<ExperimentsPage />);
    await screen.findByText('bert');
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select every experiment on this page' }));
    const bar = screen.getByRole('toolbar', { name: 'Act on the selected experiments' });
    fireEvent.click(within(bar).getByRole('button', { name: 'Delete' }));
    await act(async () => {
      fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    });
    expect(await screen.findByText('Delete: done for 2 experiments.')).toBeTruthy();
    const deletes = fake.calls.filter((c) => c.init?.method === 'DELETE').map((c) => c.url);
    expect(deletes).toEqual(['/api/v1/experiments/1', '/api/v1/experiments/2']);
  });
});
