import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { experiment, fakeFetch, json, signIn, trial } from '../test/fixtures';
import { render } from '../test/render';
import { archive, entry, gzip, header } from '../test/tarball';
import { ExperimentPage } from './ExperimentPage';

vi.mock('../components/LineChart', () => import('../test/RecordingLineChart'));

const noMetrics = () => json({ kind: 'validation', metric: 'validation_loss', metric_names: [], series: [] });

async function modelTarGz() {
  return gzip(
    archive([[header('./', 0, '5')], entry('./run.sh', 'sh train.sh\n'), entry('./lib/model.py', 'x'.repeat(2048))]),
  );
}

describe('ExperimentPage actions', () => {
  it('renames and relabels an experiment, and links to the one it was forked from', async () => {
    let current = experiment({ state: 'COMPLETED', forked_from: 4 });
    const tgz = await modelTarGz();
    const fake = fakeFetch({
      '/api/v1/experiments/1/trials': () => json({ trials: [], total: 0 }),
      '/api/v1/experiments/1/metrics': noMetrics,
      '/api/v1/experiments/1/model_definition': () =>
        new Response(tgz, { headers: { 'Content-Type': 'application/gzip' } }),
      '/api/v1/experiments/1': (_url, init) => {
        if (init?.method === 'PATCH') current = { ...current, ...JSON.parse(String(init.body)) };
        return json(current);
      },
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    render(<ExperimentPage id={1} />);
    const forked = await screen.findByText('Forked from');
    expect(
      within(forked.nextElementSibling as HTMLElement)
        .getByRole('link', { name: 'experiment 4' })
        .getAttribute('href'),
    ).toBe('/experiments/4');
    expect(screen.getByRole('link', { name: 'Fork experiment 1' }).getAttribute('href')).toBe('/experiments/1/fork');
    // The model definition's files, read from its tar.gz.
    const files = await screen.findByRole('region', { name: 'Model files' });
    expect(Array.from(files.querySelectorAll('tr[data-file]')).map((r) => r.getAttribute('data-file'))).toEqual([
      'run.sh',
      'lib/model.py',
    ]);
    expect(screen.getByText('2 files, 2.0 KiB')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Edit experiment 1' }));
    const form = screen.getByRole('form', { name: 'Edit experiment 1' });
    fireEvent.change(within(form).getByLabelText('Name'), { target: { value: 'grid-baseline' } });
    fireEvent.change(within(form).getByLabelText('Labels'), { target: { value: 'baseline, lr , baseline,' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    expect(await screen.findByRole('heading', { level: 1, name: /grid-baseline/ })).toBeTruthy();
    const patch = fake.calls.find((c) => c.init?.method === 'PATCH')!;
    expect(patch.url).toBe('/api/v1/experiments/1');
    expect(JSON.parse(String(patch.init?.body))).toEqual({
      name: 'grid-baseline',
      description: 'grid',
      labels: ['baseline', 'lr'],
    });
    expect(screen.queryByRole('form', { name: 'Edit experiment 1' })).toBeNull();
  });

  it("shows the master's refusal to delete an active experiment, and kills a single trial", async () => {
    const fake = fakeFetch({
      '/api/v1/experiments/1/trials': () =>
        json({
          trials: [
            trial(1, { lr: 0.1 }, 0.5, { latest_checkpoint: 'c1' }),
            trial(2, { lr: 0.2 }, null, { state: 'ACTIVE' }),
          ],
          total: 2,
        }),
      '/api/v1/experiments/1/metrics': noMetrics,
      '/api/v1/trials/2/kill': () => json(trial(2, { lr: 0.2 }, null, { state: 'ACTIVE' })),
      '/api/v1/experiments/1': (_url, init) =>
        init?.method === 'DELETE'
          ? json({ error: { code: 'conflict', message: 'experiment 1 is active; kill it first' } }, 409)
          : json(experiment({ state: 'ACTIVE' })),
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    render(<ExperimentPage id={1} />);
    fireEvent.click(await screen.findByRole('button', { name: 'Delete experiment 1' }));
    const dialog = screen.getByRole('dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect((await within(dialog).findByRole('alert')).textContent).toBe('experiment 1 is active; kill it first');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));

    // Only the running trial can be killed, and only one with a checkpoint continued.
    const table = await screen.findByRole('region', { name: 'Trials table' });
    expect(within(table).queryByRole('button', { name: 'Kill trial 1' })).toBeNull();
    expect(within(table).getByRole('button', { name: 'Continue trial 1' })).toBeTruthy();
    expect(within(table).queryByRole('button', { name: 'Continue trial 2' })).toBeNull();
    fireEvent.click(within(table).getByRole('button', { name: 'Kill trial 2' }));
    fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Kill trial' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const kill = fake.calls.find((c) => c.url === '/api/v1/trials/2/kill')!;
    expect(kill.init?.method).toBe('POST');
  });
});
