import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { checkpoint, experiment, fakeFetch, json, signIn, trial } from '../test/fixtures';
import { render } from '../test/render';
import { TrialPage } from './TrialPage';

vi.mock('../components/LineChart', () => import('../test/RecordingLineChart'));

const uuid = '0f1e2d3c-4b5a-4968-8776-655443322110';

describe('TrialPage', () => {
  it('links to the experiments it was continued in, and offers Continue and Register', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/trials/3/metrics': () => json({ metrics: [], total: 0, downsampled: false }),
        '/api/v1/trials/3/logs': () => json({ logs: [], offset: 0, more: false, trial_state: 'COMPLETED' }),
        '/api/v1/trials/3/allocations': () => json({ allocations: [] }),
        '/api/v1/trials/3/checkpoints': () => json({ checkpoints: [checkpoint(uuid)], total: 1 }),
        '/api/v1/trials/3': () =>
          json(
            trial(3, { lr: 0.1 }, 0.5, {
              latest_checkpoint: uuid,
              continued_in: [{ experiment_id: 4 }, { experiment_id: 6 }],
            }),
          ),
        '/api/v1/experiments/1': () => json(experiment({ state: 'COMPLETED' })),
      }).fn,
    );
    signIn({ username: 'bob', role: 'user' });
    render(<TrialPage id={3} />);
    const term = await screen.findByText('Continued');
    const links = within(term.nextElementSibling as HTMLElement).getAllByRole('link');
    expect(links.map((l) => [l.textContent, l.getAttribute('href')])).toEqual([
      ['Continued in experiment 4', '/experiments/4'],
      ['Continued in experiment 6', '/experiments/6'],
    ]);
    // Anyone who may read the checkpoints continues the trial; only its
    // owner or an admin kills it (and it has ended anyway).
    expect(await screen.findByRole('button', { name: 'Continue trial 3' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Kill trial 3' })).toBeNull();
    const table = await screen.findByRole('region', { name: 'Checkpoints table' });
    expect(within(table).getByRole('button', { name: `Register checkpoint ${uuid} as a model version` })).toBeTruthy();
  });
});
