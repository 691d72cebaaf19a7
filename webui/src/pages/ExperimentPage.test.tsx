import { screen, within } from '@testing-library/react';
import { render } from '../test/render';
import { describe, expect, it, vi } from 'vitest';
import { experiment, fakeFetch, json, signIn, trial } from '../test/fixtures';
import { ExperimentPage } from './ExperimentPage';

vi.mock('../components/LineChart', () => import('../test/RecordingLineChart'));

describe('ExperimentPage', () => {
  it('shows the header, one curve per trial, the trials with their hyperparameters and the best one', async () => {
    const trials = [
      trial(1, { lr: 0.001, bs: 32 }, 0.5),
      trial(2, { lr: 0.01, bs: 32 }, 0.0123),
      trial(3, { lr: 0.1, bs: 32 }, 0.2, { state: 'ERROR', log_signal: 'CUDA OOM' }),
    ];
    const fake = fakeFetch({
      '/api/v1/experiments/1/trials': () => json({ trials, total: 3 }),
      '/api/v1/experiments/1/metrics': (url) => {
        const training = url.includes('kind=training');
        return json({
          kind: training ? 'training' : 'validation',
          metric: training ? 'loss' : 'validation_loss',
          metric_names: training ? ['loss'] : ['validation_loss'],
          series: trials.map((t) => ({
            trial_id: t.id,
            batches: [100, 200, 300],
            values: [1, 0.5, t.best_validation],
            total: 3,
          })),
        });
      },
      '/api/v1/experiments/1': () => json(experiment({ best_trial_id: 2, num_trials: 3 })),
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    render(<ExperimentPage id={1} />);
    expect(await screen.findByRole('heading', { level: 1, name: /quadratic-grid/ })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Kill experiment 1' })).toBeTruthy();
    const chart = await screen.findByRole('figure', { name: 'validation validation_loss of every trial by batches' });
    expect(Array.from(chart.querySelectorAll('.series')).map((s) => s.textContent)).toEqual([
      'Trial 1',
      'Trial 2 (best)',
      'Trial 3',
    ]);
    expect(chart.getAttribute('data-points')).toBe('3');
    const training = await screen.findByRole('figure', { name: 'training loss of every trial by batches' });
    expect(training.querySelectorAll('.series')).toHaveLength(3);
    const table = await screen.findByRole('region', { name: 'Trials table' });
    expect(within(table).getByRole('columnheader', { name: /lr/ })).toBeTruthy();
    expect(within(table).queryByRole('columnheader', { name: /bs/ })).toBeNull(); // constant: listed below the table
    expect(screen.getByText('Same in every trial: bs = 32')).toBeTruthy();
    const bestRow = table.querySelector('tr[data-trial="2"]')!;
    expect(bestRow.className).toBe('row-best');
    expect(within(bestRow as HTMLElement).getByText('best trial')).toBeTruthy();
    // A log policy matched trial 3: its signal shows beside its state.
    const signalled = table.querySelector('tr[data-trial="3"]') as HTMLElement;
    expect(within(signalled).getByText('CUDA OOM').getAttribute('title')).toBe(
      'a log policy matched a line of this trial',
    );
    expect(within(bestRow as HTMLElement).queryByText('CUDA OOM')).toBeNull();
    expect(screen.getByRole('img', { name: /Parallel coordinates of 3 trials/ })).toBeTruthy();
    expect(fake.calls.some((c) => c.url === '/api/v1/experiments/1/metrics?kind=validation&max_points=1000')).toBe(
      true,
    );
    expect(fake.calls.some((c) => c.url === '/api/v1/experiments/1/metrics?kind=training&max_points=1000')).toBe(true);
  });

  it("says who may change someone else's experiment instead of offering actions", async () => {
    signIn({ token: 'tok-bob', username: 'bob', role: 'user' });
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/experiments/1/trials': () => json({ trials: [], total: 0 }),
        '/api/v1/experiments/1/metrics': () =>
          json({ kind: 'validation', metric: 'validation_loss', metric_names: [], series: [] }),
        '/api/v1/experiments/1': () => json(experiment({ owner: 'alice' })),
      }).fn,
    );
    render(<ExperimentPage id={1} />);
    expect(
      await screen.findByText('This is alice’s experiment: only they or an admin can pause or kill it.'),
    ).toBeTruthy();
    expect(screen.queryByRole('button', { name: /^(Pause|Activate|Kill|Archive|Unarchive) experiment 1$/ })).toBeNull();
    // Reading is the team's (experiments_team_readable); the master says no otherwise.
    expect(screen.getByRole('button', { name: 'Download model of experiment 1' })).toBeTruthy();
  });

  it('names the checkpoint a warm-started experiment starts from', async () => {
    const uuid = '0f1e2d3c-4b5a-4968-8776-655443322110';
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/experiments/1/trials': () => json({ trials: [], total: 0 }),
        '/api/v1/experiments/1/metrics': () =>
          json({ kind: 'validation', metric: 'validation_loss', metric_names: [], series: [] }),
        '/api/v1/experiments/1': () =>
          json(
            experiment({
              warm_start: { checkpoint_uuid: uuid, trial_id: 7, experiment_id: 3, batches: 1200, state: 'ACTIVE' },
            }),
          ),
      }).fn,
    );
    signIn();
    render(<ExperimentPage id={1} />);
    const term = await screen.findByText('Warm start');
    const value = term.nextElementSibling as HTMLElement;
    expect(value.textContent).toBe('Continues trial 7 of experiment 3 (checkpoint 0f1e2d3c at 1,200 batches)');
    expect(within(value).getByRole('link', { name: 'trial 7' }).getAttribute('href')).toBe('/trials/7');
    expect(within(value).getByRole('link', { name: 'experiment 3' }).getAttribute('href')).toBe('/experiments/3');
    expect(value.querySelector('code')!.getAttribute('title')).toBe(uuid);
  });

  it('says when an experiment does not exist', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/experiments/': () =>
          json({ error: { code: 'not_found', message: 'experiment 99 does not exist' } }, 404),
      }).fn,
    );
    render(<ExperimentPage id={99} />);
    expect((await screen.findByRole('alert')).textContent).toContain('experiment 99 does not exist');
  });
});
