import { fireEvent, screen, within } from '@testing-library/react';
import { render } from '../test/render';
import { describe, expect, it, vi } from 'vitest';
import { agent, job, trial } from '../test/fixtures';
import { ConfirmDialog } from './ConfirmDialog';
import { ParallelCoordinates } from './ParallelCoordinates';
import { ProgressBar } from './ProgressBar';
import { ScatterPlot } from './ScatterPlot';
import { SlotGrid } from './SlotGrid';
import { StateBadge } from './StateBadge';

describe('StateBadge and ProgressBar', () => {
  it('say the state in words and the progress as a number', () => {
    render(
      <>
        <StateBadge state="STOPPING_CANCELED" />
        <ProgressBar value={0.42} label="Progress of experiment 1" />
      </>,
    );
    expect(screen.getByText('Stopping (canceled)').className).toContain('badge-stopping');
    const bar = screen.getByRole('progressbar', { name: 'Progress of experiment 1' });
    expect(bar.getAttribute('aria-valuenow')).toBe('42');
    expect(bar.textContent).toBe('42%');
  });
});

describe('ConfirmDialog', () => {
  it('focuses Cancel, keeps Tab inside, and closes on Escape', () => {
    const onCancel = vi.fn();
    const onConfirm = vi.fn();
    render(
      <ConfirmDialog title="Kill experiment 3?" confirmLabel="Kill" danger onConfirm={onConfirm} onCancel={onCancel}>
        It stops now.
      </ConfirmDialog>,
    );
    const dialog = screen.getByRole('dialog', { name: 'Kill experiment 3?' });
    const cancel = within(dialog).getByRole('button', { name: 'Cancel' });
    const kill = within(dialog).getByRole('button', { name: 'Kill' });
    expect(document.activeElement).toBe(cancel);
    kill.focus();
    fireEvent.keyDown(kill, { key: 'Tab' });
    expect(document.activeElement).toBe(cancel);
    fireEvent.click(kill);
    expect(onConfirm).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(onCancel).toHaveBeenCalledTimes(1);
  });
  it('shows what went wrong', () => {
    render(
      <ConfirmDialog
        title="Pause?"
        confirmLabel="Pause"
        error="experiment 3 has ended"
        onConfirm={() => {}}
        onCancel={() => {}}
      />,
    );
    expect(screen.getByRole('alert').textContent).toBe('experiment 3 has ended');
  });
});

describe('hyperparameter plots', () => {
  const trials = [
    trial(1, { lr: 0.001, opt: 'sgd' }, 0.9),
    trial(2, { lr: 0.01, opt: 'adam' }, 0.1),
    trial(3, { lr: 0.3, opt: 'sgd' }, 0.5),
    trial(4, { lr: 0.1, opt: 'adam' }, null),
  ];
  it('draws one line per trial through every axis, the best one highlighted', () => {
    const { container } = render(
      <ParallelCoordinates
        trials={trials}
        hparams={['lr', 'opt']}
        metric="validation_loss"
        smallerIsBetter
        bestId={2}
      />,
    );
    const lines = container.querySelectorAll('polyline');
    expect(lines).toHaveLength(4);
    const best = container.querySelector('polyline[data-trial="2"]')!;
    expect(best.getAttribute('class')).toContain('pc-best');
    expect(best.getAttribute('points')!.split(' ')).toHaveLength(3);
    // A trial without a metric still shows its hyperparameters, dashed.
    expect(container.querySelector('polyline[data-trial="4"]')!.getAttribute('points')!.split(' ')).toHaveLength(2);
    expect(container.querySelector('polyline[data-trial="4"]')!.getAttribute('stroke-dasharray')).toBe('4 3');
    expect(screen.getByRole('img').getAttribute('aria-label')).toContain('lr, opt and validation_loss');
  });
  it('plots the metric against a hyperparameter with links to the trials', () => {
    const { container } = render(<ScatterPlot trials={trials} hparam="lr" metric="validation_loss" bestId={2} />);
    const points = container.querySelectorAll('a.scatter-point');
    expect(points).toHaveLength(3);
    expect(container.querySelector('a[data-trial="2"] circle')!.getAttribute('class')).toBe('pt pt-best');
    expect(container.querySelector('a[data-trial="3"]')!.getAttribute('href')).toBe('/trials/3');
    expect(container.textContent).toContain('lr (log)');
  });
});

describe('SlotGrid', () => {
  it('draws each slot, held ones as links coloured by allocation', () => {
    render(<SlotGrid agent={agent('agent-1', ['5.0', null, '5.0'])} jobs={[job('5.0', { experiment_id: 2 })]} />);
    const list = screen.getByRole('list', { name: 'Slots of agent-1' });
    expect(within(list).getAllByRole('listitem')).toHaveLength(3);
    const held = screen.getAllByRole('link');
    expect(held).toHaveLength(2);
    expect(held[0].getAttribute('href')).toBe('/trials/5');
    expect(held[0].getAttribute('aria-label')).toBe('agent-1 slot 0 (cpu): allocation 5.0, trial 5, experiment 2');
    expect(held[0].style.background).toBe(held[1].style.background);
    expect(screen.getByRole('img', { name: 'agent-1 slot 1 (cpu): free' })).toBeTruthy();
  });
});
