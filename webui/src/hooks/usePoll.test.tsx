import { act, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Fetched } from '../api/client';
import { usePoll } from './usePoll';

function Probe({
  load,
  dep,
  onRender,
}: {
  load: (s: AbortSignal) => Promise<Fetched<string>>;
  dep: number;
  onRender: () => void;
}) {
  const p = usePoll(load, [dep], 1000);
  onRender();
  return <p>{p.loading ? 'loading' : p.error ? `error: ${p.error.message}` : p.data}</p>;
}

describe('usePoll', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('polls, renders only on change, keeps data on errors and shows new deps at once', async () => {
    const answers: (Fetched<string> | Error)[] = [
      { data: 'a', changed: true },
      { data: 'a', changed: false },
      new Error('master down'),
      { data: 'b', changed: true },
      { data: 'x', changed: false }, // cached answer of another URL: still shown, it is new to this view
    ];
    const load = vi.fn(async () => {
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    });
    const renders = vi.fn();
    const view = render(<Probe load={load} dep={1} onRender={renders} />);
    expect(screen.getByText('loading')).toBeTruthy();
    await act(async () => {});
    expect(screen.getByText('a')).toBeTruthy();
    const before = renders.mock.calls.length;
    await act(async () => vi.advanceTimersByTimeAsync(1000)); // 304: no render
    expect(renders.mock.calls.length).toBe(before);
    await act(async () => vi.advanceTimersByTimeAsync(1000)); // error: data kept
    expect(screen.getByText('error: master down')).toBeTruthy();
    await act(async () => vi.advanceTimersByTimeAsync(1500)); // backoff: not yet
    expect(load).toHaveBeenCalledTimes(3);
    await act(async () => vi.advanceTimersByTimeAsync(500));
    expect(screen.getByText('b')).toBeTruthy();
    view.rerender(<Probe load={load} dep={2} onRender={renders} />);
    await act(async () => {});
    expect(screen.getByText('x')).toBeTruthy();
  });

  it('stops when the tab is hidden and resumes when it is shown', async () => {
    const load = vi.fn(async () => ({ data: 'a', changed: true }));
    render(<Probe load={load} dep={1} onRender={() => {}} />);
    await act(async () => {});
    const hidden = vi.spyOn(document, 'visibilityState', 'get').mockReturnValue('hidden');
    await act(async () => vi.advanceTimersByTimeAsync(5000));
    expect(load).toHaveBeenCalledTimes(1);
    hidden.mockReturnValue('visible');
    await act(async () => {
      document.dispatchEvent(new Event('visibilitychange'));
    });
    expect(load).toHaveBeenCalledTimes(2);
  });
});

describe('usePoll pace', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function Paced({ load, every }: { load: (s: AbortSignal) => Promise<Fetched<string>>; every: number }) {
    const p = usePoll(load, [], every);
    return <p>{p.data ?? 'loading'}</p>;
  }

  it('reads once more when polling stops, then no more', async () => {
    const load = vi.fn(async () => ({ data: 'a', changed: true }));
    const view = render(<Paced load={load} every={1000} />);
    await act(async () => vi.advanceTimersByTimeAsync(2500));
    expect(load).toHaveBeenCalledTimes(3);
    view.rerender(<Paced load={load} every={0} />);
    await act(async () => {});
    expect(load).toHaveBeenCalledTimes(4);
    await act(async () => vi.advanceTimersByTimeAsync(10000));
    expect(load).toHaveBeenCalledTimes(4);
  });
});
