import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { experiment, fakeFetch, json, signIn, trial } from '../test/fixtures';
import { render } from '../test/render';
import { ContinueTrial } from './ContinueTrial';

const single = { name: 'single', metric: 'validation_loss', smaller_is_better: true, max_trials: 1 };
const config = 'name: one\nsearcher:\n  name: single\n  metric: validation_loss\n  max_length:\n    batches: 300\n';

describe('ContinueTrial', () => {
  it("asks for the new length in the searcher's unit, shows the master's refusal, then opens the new experiment", async () => {
    let answers = 0;
    const fake = fakeFetch({
      '/api/v1/trials/2/continue': () =>
        ++answers === 1
          ? json(
              { error: { code: 'bad_request', message: 'length 200 is not beyond the checkpoint at 300 batches' } },
              400,
            )
          : json({ id: 9, warnings: [] }, 201),
    });
    vi.stubGlobal('fetch', fake.fn);
    signIn({ username: 'bob', role: 'user' });
    // Not bob's experiment: only a new experiment is offered.
    render(
      <ContinueTrial
        trial={trial(2, {}, 0.1)}
        experiment={experiment({ config, state: 'COMPLETED', searcher: single })}
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Continue trial 2' }));
    const dialog = screen.getByRole('dialog', { name: 'Continue trial 2' });
    const length = within(dialog).getByLabelText('New total length (batches)');
    expect(document.activeElement).toBe(length);
    expect(within(dialog).queryByRole('radio')).toBeNull();
    expect(dialog.textContent).toContain('its searcher asked for 300 batches');

    fireEvent.click(within(dialog).getByRole('button', { name: 'Continue' }));
    expect(within(dialog).getByRole('alert').textContent).toBe('Give the new total length as a whole number above 0.');
    expect(fake.calls).toHaveLength(0);

    fireEvent.change(length, { target: { value: '200' } });
    fireEvent.keyDown(length, { key: 'Enter' });
    expect((await within(dialog).findByRole('alert')).textContent).toBe(
      'length 200 is not beyond the checkpoint at 300 batches',
    );
    fireEvent.change(length, { target: { value: '600' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Continue' }));
    await waitFor(() => expect(window.location.pathname).toBe('/experiments/9'));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(fake.calls.map((c) => [c.url, c.init?.method, JSON.parse(String(c.init?.body))])).toEqual([
      ['/api/v1/trials/2/continue', 'POST', { length: 200 }],
      ['/api/v1/trials/2/continue', 'POST', { length: 600 }],
    ]);
  });

  it("offers in place for the owner's ended single-trial experiment, and stays", async () => {
    const fake = fakeFetch({ '/api/v1/trials/2/continue': () => json({ id: 1, in_place: true, warnings: [] }) });
    vi.stubGlobal('fetch', fake.fn);
    window.history.replaceState(null, '', '/trials/2');
    signIn();
    const timeConfig = 'searcher:\n  name: single\n  time_metric: epochs\n  max_time: 4\n';
    render(
      <ContinueTrial
        trial={trial(2, {}, 0.1)}
        experiment={experiment({ config: timeConfig, state: 'COMPLETED', searcher: single })}
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Continue trial 2' }));
    const dialog = screen.getByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('New total length (epochs)'), { target: { value: '8' } });
    expect((within(dialog).getByRole('radio', { name: /As a new experiment/ }) as HTMLInputElement).checked).toBe(true);
    fireEvent.click(within(dialog).getByRole('radio', { name: /In place/ }));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Continue' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(window.location.pathname).toBe('/trials/2');
    expect(JSON.parse(String(fake.calls[0].init?.body))).toEqual({ length: 8, in_place: true });
  });

  it('offers no in place while the experiment runs', () => {
    signIn();
    render(
      <ContinueTrial
        trial={trial(2, {}, 0.1)}
        experiment={experiment({ config, state: 'ACTIVE', searcher: single })}
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Continue trial 2' }));
    expect(within(screen.getByRole('dialog')).queryByRole('radio')).toBeNull();
  });
});
