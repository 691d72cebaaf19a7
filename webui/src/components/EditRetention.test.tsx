import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { experiment, fakeFetch, json, signIn } from '../test/fixtures';
import { render } from '../test/render';
import { EditRetention, retentionPatch, retentionText } from './EditRetention';

const config = 'name: g\ncheckpoint_storage:\n  save_trial_latest: 2\nretention_policy:\n  log_retention_days: 30\n';
const base = { saveExperimentBest: 0, saveTrialBest: 1, saveTrialLatest: 2, logRetentionDays: 30 };

describe('EditRetention', () => {
  it('says what is kept', () => {
    expect(retentionText(base)).toBe(
      'checkpoints: best 0 of the experiment, best 1 and latest 2 of each trial; logs 30 days after a trial ends',
    );
    expect(retentionText({ ...base, logRetentionDays: -1 })).toMatch(/logs forever$/);
    expect(retentionText({ ...base, logRetentionDays: null })).toMatch(/logs as the master's default$/);
  });

  it('sends only what changed', () => {
    expect(retentionPatch(base, base)).toBeNull();
    expect(retentionPatch(base, { ...base, saveTrialLatest: 0, logRetentionDays: null })).toEqual({
      checkpoint_storage: { save_trial_latest: 0 },
      log_retention_days: null,
    });
  });

  it("starts from the config's values, refuses a negative count, and saves", async () => {
    const fake = fakeFetch({ '/api/v1/experiments/1': () => json(experiment({ config })) });
    vi.stubGlobal('fetch', fake.fn);
    signIn();
    const onClose = vi.fn();
    render(<EditRetention experiment={experiment({ config })} onClose={onClose} />);
    const form = screen.getByRole('form', { name: 'Retention of experiment 1' });
    const latest = within(form).getByLabelText('Latest of each trial') as HTMLInputElement;
    expect(latest.value).toBe('2');
    expect((within(form).getByLabelText('Best of each trial') as HTMLInputElement).value).toBe('1');
    expect((within(form).getByLabelText('Keep logs') as HTMLSelectElement).value).toBe('days');
    expect((within(form).getByLabelText('Days after a trial ends') as HTMLInputElement).value).toBe('30');

    fireEvent.change(latest, { target: { value: '-1' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    expect(within(form).getByRole('alert').textContent).toBe('Checkpoint counts are whole numbers, 0 or more.');
    expect(fake.calls).toHaveLength(0);

    fireEvent.change(latest, { target: { value: '5' } });
    fireEvent.change(within(form).getByLabelText('Keep logs'), { target: { value: 'forever' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(fake.calls[0].init?.method).toBe('PATCH');
    expect(JSON.parse(String(fake.calls[0].init?.body))).toEqual({
      checkpoint_storage: { save_trial_latest: 5 },
      log_retention_days: -1,
    });
  });
});
