import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Trial } from '../api/types';
import { rememberedComparison } from '../lib/compare';
import { experiment, fakeFetch, json, signIn, trial } from '../test/fixtures';
import { render } from '../test/render';
import { ComparePage } from './ComparePage';

vi.mock('../components/LineChart', () => import('../test/RecordingLineChart'));

// Two experiments: 1 (trials 2 and 3, validation_loss and accuracy) and 4
// (trial 11, validation_loss only, other hyperparameters).
const exp1 = [trial(2, { lr: 0.01, bs: 32 }, 0.2), trial(3, { lr: 0.1, bs: 32 }, 0.4)];
const exp4 = [
  trial(11, { lr: 0.05, dropout: 0.5 }, 0.9, { experiment_id: 4 }),
  trial(12, { lr: 0.5 }, null, { experiment_id: 4 }),
];

function metricsOf(trials: Trial[], names: string[]) {
  return (url: string) => {
    const q = new URL(url, 'http://x').searchParams;
    const metric = q.get('metric') ?? names[0];
    const reports = names.includes(metric);
    return json({
      kind: q.get('kind') ?? 'validation',
      metric,
      metric_names: names,
      series: trials.map((t) => ({
        trial_id: t.id,
        batches: reports ? [100, 200] : [],
        values: reports ? [1, t.best_validation ?? 0.7] : [],
        total: reports ? 2 : 0,
      })),
    });
  };
}

function cluster() {
  return fakeFetch({
    '/api/v1/trials/2': () => json(exp1[0]),
    '/api/v1/trials/3': () => json(exp1[1]),
    '/api/v1/trials/11': () => json(exp4[0]),
    '/api/v1/trials/12': () => json(exp4[1]),
    '/api/v1/trials/': () => json({ error: { code: 'not_found', message: 'trial 99 does not exist' } }, 404),
    '/api/v1/experiments/1/trials': () => json({ trials: exp1, total: 2 }),
    '/api/v1/experiments/1/metrics': metricsOf(exp1, ['accuracy', 'validation_loss']),
    '/api/v1/experiments/1': () => json(experiment({ id: 1, name: 'grid', state: 'COMPLETED' })),
    '/api/v1/experiments/4/trials': () => json({ trials: exp4, total: 2 }),
    '/api/v1/experiments/4/metrics': metricsOf(exp4, ['validation_loss']),
    '/api/v1/experiments/4': () =>
      json(
        experiment({
          id: 4,
          name: 'random',
          searcher: { name: 'random', metric: 'validation_loss', smaller_is_better: true, max_trials: 2 },
        }),
      ),
    '/api/v1/experiments/': () => json({ error: { code: 'not_found', message: 'no such experiment' } }, 404),
  });
}

function open(search: string) {
  window.history.replaceState(null, '', `/compare${search}`);
  return render(<ComparePage />);
}

const seriesLabels = (figure: HTMLElement) => Array.from(figure.querySelectorAll('.series')).map((s) => s.textContent);

describe('ComparePage', () => {
  beforeEach(() => signIn());

  it('draws trials of two experiments on one chart and lists them with every hyperparameter', async () => {
    const fake = cluster();
    vi.stubGlobal('fetch', fake.fn);
    open('?trials=2,11');
    const chart = await screen.findByRole('figure', {
      name: 'validation validation_loss of the compared trials by batches',
    });
    await waitFor(() => expect(seriesLabels(chart)).toEqual(['exp 1 · trial 2', 'exp 4 · trial 11']));
    // The metrics of either experiment, once each.
    const metric = screen.getByLabelText('Metric') as HTMLSelectElement;
    expect(Array.from(metric.options).map((o) => o.value)).toEqual(['accuracy', 'validation_loss']);
    expect(metric.value).toBe('validation_loss');
    // One request per experiment for the names, one for the series; none per trial.
    expect(fake.calls.some((c) => c.url === '/api/v1/experiments/1/metrics?kind=validation&max_points=2')).toBe(true);
    expect(
      fake.calls.some(
        (c) => c.url === '/api/v1/experiments/4/metrics?kind=validation&metric=validation_loss&max_points=1000',
      ),
    ).toBe(true);
    expect(fake.calls.some((c) => c.url.startsWith('/api/v1/trials/2/metrics'))).toBe(false);

    const table = screen.getByRole('region', { name: 'Compared trials' });
    await waitFor(() => expect(table.querySelectorAll('tbody tr')).toHaveLength(2));
    const headers = within(table)
      .getAllByRole('columnheader')
      .map((h) => h.textContent?.replace(/[▲▼↕]/g, ''));
    expect(headers).toEqual([
      'Experiment',
      'Trial',
      'State',
      'bs',
      'dropout',
      'lr',
      'Best searcher metric',
      'Latest validation_loss',
      'Remove',
    ]);
    const first = table.querySelector('tr[data-trial="2"]') as HTMLElement;
    expect(Array.from(first.querySelectorAll('td')).map((td) => td.textContent)).toEqual([
      'grid #1',
      '2',
      'Completed',
      '32',
      '', // no dropout in experiment 1
      '0.01',
      '0.2 validation_loss ↓',
      '0.2',
      'Remove',
    ]);
    expect(within(first).getByRole('link', { name: 'exp 1 · trial 2' }).getAttribute('href')).toBe('/trials/2');
    expect(within(table.querySelector('tr[data-trial="11"]') as HTMLElement).getByText('random #4')).toBeTruthy();
    expect(rememberedComparison()).toEqual([2, 11]);

    // Sorting by a hyperparameter puts the trial of experiment 4 first.
    fireEvent.click(within(table).getByRole('button', { name: /lr/ }));
    fireEvent.click(within(table).getByRole('button', { name: /lr/ }));
    expect(table.querySelector('tbody tr')!.getAttribute('data-trial')).toBe('11');
  });

  it('switches the metric through the URL, and says which trials do not report it', async () => {
    const fake = cluster();
    vi.stubGlobal('fetch', fake.fn);
    open('?trials=2,11');
    await screen.findByRole('figure', { name: /validation_loss of the compared trials/ });
    fireEvent.change(screen.getByLabelText('Metric'), { target: { value: 'accuracy' } });
    expect(window.location.search).toBe('?trials=2,11&metric=accuracy');
    const chart = await screen.findByRole('figure', { name: 'validation accuracy of the compared trials by batches' });
    await waitFor(() => expect(seriesLabels(chart)).toEqual(['exp 1 · trial 2']));
    expect(screen.getByText(/Without accuracy points: exp 4 · trial 11\./)).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Kind'), { target: { value: 'training' } });
    expect(window.location.search).toBe('?trials=2,11&kind=training');
    await waitFor(() => expect(fake.calls.some((c) => c.url.includes('kind=training&max_points=2'))).toBe(true));
  });

  it('adds trials by id, refusing one that does not exist, and removes them', async () => {
    vi.stubGlobal('fetch', cluster().fn);
    open('?trials=2');
    await screen.findByRole('figure', { name: /of the compared trials/ });
    const form = screen.getByRole('form', { name: 'Add trials' });
    fireEvent.change(within(form).getByLabelText('Trial ids'), { target: { value: '99' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Trial 99 does not exist or is not visible to you.');
    expect(window.location.search).toBe('?trials=2');
    fireEvent.change(within(form).getByLabelText('Trial ids'), { target: { value: '11, 2' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add' }));
    await waitFor(() => expect(window.location.search).toBe('?trials=2,11'));
    expect(screen.getByRole('alert').textContent).toBe('Trial 2 is compared already.');
    const table = screen.getByRole('region', { name: 'Compared trials' });
    await waitFor(() => expect(table.querySelectorAll('tbody tr')).toHaveLength(2));
    fireEvent.click(within(table).getByRole('button', { name: 'Remove trial 2 from the comparison' }));
    expect(window.location.search).toBe('?trials=11');
    await waitFor(() => expect(table.querySelectorAll('tbody tr')).toHaveLength(1));
  });

  it('expands experiments into their trials, naming one it cannot read', async () => {
    vi.stubGlobal('fetch', cluster().fn);
    open('?trials=11&experiments=1,77');
    await waitFor(() => expect(window.location.search).toBe('?trials=11,2,3'));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Experiment 77 does not exist or is not visible to you.',
    );
    const table = screen.getByRole('region', { name: 'Compared trials' });
    await waitFor(() => expect(table.querySelectorAll('tbody tr')).toHaveLength(3));
  });

  it('names a trial of the URL it cannot read, with a way to remove it', async () => {
    vi.stubGlobal('fetch', cluster().fn);
    open('?trials=2,99,x');
    const alerts = await screen.findAllByRole('alert');
    const text = alerts.map((a) => a.textContent).join(' | ');
    expect(text).toContain('Not an id, left out: x');
    await waitFor(() => expect(screen.getByText(/Trial 99 does not exist or is not visible to you\./)).toBeTruthy());
    fireEvent.click(screen.getByRole('button', { name: 'Remove trial 99 from the comparison' }));
    expect(window.location.search).toBe('?trials=2');
  });

  it('says what to do when there is nothing to compare', () => {
    vi.stubGlobal('fetch', cluster().fn);
    open('');
    expect(screen.getByText('Nothing to compare yet.')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'experiment list' }).getAttribute('href')).toBe('/experiments');
  });
});
