import { fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { RAMP } from '../lib/heatmap';
import { experiment, trial } from '../test/fixtures';
import { render } from '../test/render';
import { HeatMap } from './HeatMap';

// jsdom writes colours as rgb().
const rgb = (hex: string) => {
  const n = parseInt(hex.slice(1), 16);
  return `rgb(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255})`;
};

const trials = [
  trial(1, { lr: 0.01, bs: 16, opt: 'sgd' }, 0.5),
  trial(2, { lr: 0.01, bs: 16, opt: 'adam' }, 0.3),
  trial(3, { lr: 0.1, bs: 16, opt: 'sgd' }, 0.9),
  trial(4, { lr: 0.1, bs: 64, opt: 'sgd' }, 0.1),
  trial(5, { lr: 0.001, bs: 64, opt: 'adam' }, 0.6),
  trial(6, { lr: 0.001, bs: 64, opt: 'sgd' }, null), // no metric yet: not in the map
];

function cells(table: HTMLElement) {
  return Array.from(table.querySelectorAll('tbody tr')).map((tr) =>
    Array.from(tr.querySelectorAll('th, td')).map((c) => c.textContent),
  );
}

describe('HeatMap', () => {
  it('shows the best metric of each cell over the two most varied hyperparameters, empty cells marked', () => {
    render(<HeatMap experiment={experiment()} trials={trials} />);
    const table = screen.getByRole('table');
    expect(within(table).getByText(/Best validation_loss of the trials in each cell, by lr/)).toBeTruthy();
    expect(within(table).getByText(/smaller is better, darker is better/)).toBeTruthy();
    expect(
      within(table)
        .getAllByRole('columnheader')
        .map((h) => h.textContent),
    ).toEqual(['bs \\ lr', '0.001', '0.01', '0.1']);
    // Rows from the largest bs down; the cell of lr 0.01, bs 16 holds two
    // trials and shows the smaller metric, linked to its trial.
    expect(cells(table)).toEqual([
      ['64', '0.6, 1 trial', '·no trial', '0.1, 1 trial'],
      ['16', '·no trial', '0.3 ×2, 2 trials', '0.9, 1 trial'],
    ]);
    const two = table.querySelector('td[data-count="2"]') as HTMLElement;
    expect(within(two).getByRole('link').getAttribute('href')).toBe('/trials/2');
    expect(two.getAttribute('title')).toBe('lr 0.01, bs 16: Best validation_loss 0.3 of 2 trials (best: trial 2)');
    // Darkest is best: 0.1 (smallest) is the dark end of the ramp, 0.9 the light end.
    const byValue = (v: string) => within(table).getByRole('link', { name: v }).closest('td') as HTMLElement;
    expect(byValue('0.1').style.background).toBe(rgb(RAMP[RAMP.length - 1]));
    expect(byValue('0.9').style.background).toBe(rgb(RAMP[0]));
    expect(byValue('0.1').style.color).toBe('rgb(255, 255, 255)');
    expect(screen.getByText('0.9 (worst)')).toBeTruthy();
    expect(screen.getByText('0.1 (best)')).toBeTruthy();
  });

  it('follows a metric where larger is better, the mean, and other axes', () => {
    const e = experiment({
      searcher: { name: 'grid', metric: 'accuracy', smaller_is_better: false, max_trials: 6 },
    });
    render(<HeatMap experiment={e} trials={trials} />);
    const table = screen.getByRole('table');
    const byValue = (v: string) => within(table).getByRole('link', { name: v }).closest('td') as HTMLElement;
    expect(byValue('0.9').style.background).toBe(rgb(RAMP[RAMP.length - 1]));
    expect(byValue('0.1').style.background).toBe(rgb(RAMP[0]));
    expect(within(table).getByText(/larger is better/)).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Cell value'), { target: { value: 'mean' } });
    expect(within(table).getByText(/Mean accuracy of the trials in each cell/)).toBeTruthy();
    expect(within(table).getByRole('link', { name: '0.4' }).getAttribute('href')).toBe('/trials/1'); // mean of 0.5 and 0.3
    fireEvent.change(screen.getByLabelText('Rows (y)'), { target: { value: 'opt' } });
    expect(cells(screen.getByRole('table')).map((r) => r[0])).toEqual(['adam', 'sgd']); // categories in order
  });

  it('says when the search varied fewer than two hyperparameters', () => {
    render(
      <HeatMap experiment={experiment()} trials={[trial(1, { lr: 0.1, bs: 1 }, 1), trial(2, { lr: 0.2, bs: 1 }, 2)]} />,
    );
    expect(screen.getByText('A heat map needs two hyperparameters the search varied.')).toBeTruthy();
    expect(screen.getByText('This search varied only lr.')).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
  });
});
