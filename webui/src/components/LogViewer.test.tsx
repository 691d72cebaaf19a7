import { fireEvent, screen, waitFor } from '@testing-library/react';
import { render } from '../test/render';
import { describe, expect, it, vi } from 'vitest';
import type { LogLine } from '../api/types';
import { fakeFetch, json } from '../test/fixtures';
import { LogViewer } from './LogViewer';

const line = (id: number, rank: number, text: string): LogLine => ({
  id,
  allocation_id: '1.0',
  rank,
  stream: id === 3 ? 'stderr' : 'stdout',
  line: text,
  ts_ms: 0,
});

describe('LogViewer', () => {
  it('loads an ended trial once, filters by rank on the master and searches the lines', async () => {
    const fake = fakeFetch({
      '/api/v1/trials/4/logs': (url) => {
        const rank = new URL(url, 'http://x').searchParams.get('rank');
        const all = [line(1, 0, 'starting rank 0'), line(2, 1, 'starting rank 1'), line(3, 0, 'validation_loss 0.25')];
        const logs = rank === null ? all : all.filter((l) => String(l.rank) === rank);
        const offset = Number(new URL(url, 'http://x').searchParams.get('offset'));
        const fresh = logs.filter((l) => l.id > offset);
        return json({
          logs: fresh,
          offset: fresh.length ? fresh[fresh.length - 1].id : offset,
          more: false,
          trial_state: 'COMPLETED',
        });
      },
    });
    vi.stubGlobal('fetch', fake.fn);
    render(<LogViewer trialId={4} worldSize={2} />);
    expect(await screen.findByText('validation_loss 0.25')).toBeTruthy();
    expect(screen.getByText('3 lines')).toBeTruthy();
    await waitFor(() => expect(fake.calls).toHaveLength(2)); // one more read after the end, then it stops

    fireEvent.change(screen.getByLabelText('Search'), { target: { value: 'STARTING' } });
    expect(screen.getByText('2 of 3 lines')).toBeTruthy();
    expect(screen.getAllByText('starting').every((m) => m.tagName === 'MARK')).toBe(true);

    fireEvent.change(screen.getByLabelText('Search'), { target: { value: '' } });
    fireEvent.change(screen.getByLabelText('Rank'), { target: { value: '1' } });
    await waitFor(() => expect(screen.getByText('1 lines')).toBeTruthy());
    expect(fake.calls.at(-1)!.url).toContain('rank=1');
    expect(screen.queryByText('validation_loss 0.25')).toBeNull();
  });

  it('reads every page of an ended trial while the master says a page stopped at its limit', async () => {
    // Pages of one line each, as when lines are long and max_log_page_bytes ends each answer.
    const pages = [line(1, 0, 'first page'), line(2, 0, 'second page'), line(3, 0, 'third page')];
    const fake = fakeFetch({
      '/api/v1/trials/6/logs': (url) => {
        const offset = Number(new URL(url, 'http://x').searchParams.get('offset'));
        const next = pages.filter((l) => l.id > offset).slice(0, 1);
        const last = next.length ? next[0].id : offset;
        return json({ logs: next, offset: last, more: last < 3, trial_state: 'COMPLETED' });
      },
    });
    vi.stubGlobal('fetch', fake.fn);
    render(<LogViewer trialId={6} />);
    expect(await screen.findByText('third page')).toBeTruthy();
    expect(screen.getByText('3 lines')).toBeTruthy();
    const offsets = fake.calls.map((c) => new URL(c.url, 'http://x').searchParams.get('offset'));
    expect(offsets.slice(0, 3)).toEqual(['0', '1', '2']);
  });

  it('says when there is nothing yet', async () => {
    vi.stubGlobal(
      'fetch',
      fakeFetch({ '/api/v1/trials/5/logs': () => json({ logs: [], offset: 0, more: false, trial_state: 'CANCELED' }) })
        .fn,
    );
    render(<LogViewer trialId={5} />);
    expect(await screen.findByText('No log lines yet.')).toBeTruthy();
  });
});
