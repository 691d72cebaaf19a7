// The ways into the Compare page: the navigation, the experiment list's
// selection, an experiment's page (which also has the heat map) and a
// trial's page.
import { fireEvent, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../App';
import { rememberComparison } from '../lib/compare';
import { experiment, fakeFetch, json, signIn, trial } from '../test/fixtures';
import { render } from '../test/render';
import { ExperimentPage } from './ExperimentPage';
import { ExperimentsPage } from './ExperimentsPage';
import { TrialPage } from './TrialPage';

vi.mock('../components/LineChart', () => import('../test/RecordingLineChart'));
vi.mock('../components/TerminalView', () => import('../test/RecordingTerminalView'));

const trials = [
  trial(5, { lr: 0.01, bs: 16 }, 0.4),
  trial(6, { lr: 0.1, bs: 16 }, 0.2),
  trial(7, { lr: 0.1, bs: 64 }, 0.3),
];
const noMetrics = () => json({ kind: 'validation', metric: null, metric_names: [], series: [] });

describe('links to the Compare page', () => {
  beforeEach(() => signIn());

  it('are in the navigation, going back to the latest comparison', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/trials/5': () => json(trials[0]),
        '/api/v1/experiments/1/metrics': noMetrics,
        '/api/v1/experiments/1/trials': () => json({ trials, total: 3 }),
        '/api/v1/experiments/1': () => json(experiment()),
      }).fn,
    );
    rememberComparison([9]); // an older comparison of this tab
    window.history.replaceState(null, '', '/compare?trials=5');
    render(<App />);
    const nav = screen.getByRole('navigation', { name: 'Main' });
    expect(await screen.findByRole('heading', { level: 1, name: 'Compare trials' })).toBeTruthy();
    const link = within(nav).getByRole('link', { name: 'Compare' });
    expect(link.getAttribute('aria-current')).toBe('page');
    expect(link.getAttribute('href')).toBe('/compare?trials=5');
    fireEvent.click(within(nav).getByRole('link', { name: 'Experiments' }));
    expect(within(nav).getByRole('link', { name: 'Compare' }).getAttribute('href')).toBe('/compare?trials=5');
  });

  it("are the experiment list's Compare of the selected rows", async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/experiments': () =>
          json({
            experiments: [experiment(), experiment({ id: 2, name: 'bert' })],
            total: 2,
            facets: { owners: [], labels: [] },
          }),
      }).fn,
    );
    window.history.replaceState(null, '', '/experiments');
    render(<ExperimentsPage />);
    fireEvent.click(await screen.findByRole('checkbox', { name: 'Select experiment 2' }));
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select experiment 1' }));
    const bar = screen.getByRole('toolbar', { name: 'Act on the selected experiments' });
    expect(within(bar).getByRole('link', { name: 'Compare' }).getAttribute('href')).toBe('/compare?experiments=1,2');
  });

  it("are on an experiment's page, which has the heat map of its metric", async () => {
    rememberComparison([40]);
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/experiments/1/trials': () => json({ trials, total: 3 }),
        '/api/v1/experiments/1/metrics': noMetrics,
        '/api/v1/experiments/1': () => json(experiment({ best_trial_id: 6, num_trials: 3 })),
      }).fn,
    );
    render(<ExperimentPage id={1} />);
    const link = await screen.findByRole('link', { name: 'Compare the trials of experiment 1' });
    expect(link.getAttribute('href')).toBe('/compare?trials=40&experiments=1');
    const heat = await screen.findByRole('region', { name: 'Heat map table' });
    expect(heat.querySelectorAll('td.heat-cell')).toHaveLength(3);
    expect(heat.querySelectorAll('td.heat-empty')).toHaveLength(1);
    expect(within(heat).getByRole('link', { name: '0.2' }).getAttribute('href')).toBe('/trials/6');
  });

  it("are on a trial's page, adding it to the latest comparison", async () => {
    rememberComparison([40, 41]);
    vi.stubGlobal(
      'fetch',
      fakeFetch({
        '/api/v1/trials/5/metrics': () => json({ metrics: [], total: 0, downsampled: false }),
        '/api/v1/trials/5/logs': () => json({ logs: [], offset: 0, more: false, trial_state: 'COMPLETED' }),
        '/api/v1/trials/5/allocations': () => json({ allocations: [] }),
        '/api/v1/trials/5/checkpoints': () => json({ checkpoints: [], total: 0 }),
        '/api/v1/trials/5': () => json(trials[0]),
        '/api/v1/experiments/1': () => json(experiment({ state: 'COMPLETED' })),
      }).fn,
    );
    render(<TrialPage id={5} />);
    const link = await screen.findByRole('link', { name: 'Compare trial 5 with other trials' });
    expect(link.getAttribute('href')).toBe('/compare?trials=40,41,5');
  });
});
