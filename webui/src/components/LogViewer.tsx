// A trial's logs, live: catches up in pages, then long-polls the master
// (follow=true holds each request until a line arrives, up to 20 s) until the
// trial ends. Filter by rank (asks the master again), search the loaded lines
// (matches highlighted), and Follow keeps the newest line in view; scrolling
// up turns it off.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { api } from '../api/client';
import type { LogLine, RunState } from '../api/types';
import { isTerminal } from '../lib/experiments';
import { appendLines, formatLogTime, ranksOf, searchLines, splitMatches } from '../lib/logs';
import { formatCount } from '../lib/format';

const PAGE = 5000;
const MAX_RENDERED = 3000;

function sleep(ms: number, signal: AbortSignal) {
  return new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

export function LogViewer({ trialId, worldSize = 0 }: { trialId: number; worldSize?: number }) {
  const [rank, setRank] = useState<number | null>(null);
  const [search, setSearch] = useState('');
  const [follow, setFollow] = useState(true);
  const [buffer, setBuffer] = useState<{ lines: LogLine[]; dropped: number }>({ lines: [], dropped: 0 });
  const [status, setStatus] = useState<{ loading: boolean; live: boolean; error: string | null }>({
    loading: true,
    live: false,
    error: null,
  });
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const controller = new AbortController();
    const signal = controller.signal;
    setBuffer({ lines: [], dropped: 0 });
    setStatus({ loading: true, live: false, error: null });
    (async () => {
      let offset = 0;
      let first = true;
      let ended = false;
      let failures = 0;
      while (!signal.aborted) {
        try {
          // The first read answers at once; later ones wait for new lines
          // (the master answers at once while there are lines to catch up on,
          // or when the trial has ended).
          const page = await api.logs(trialId, { offset, rank, limit: PAGE, follow: !first }, signal);
          first = false;
          failures = 0;
          if (page.logs.length) setBuffer((b) => appendLines(b, page.logs));
          offset = page.offset;
          const terminal = isTerminal(page.trial_state as RunState);
          setStatus({ loading: false, live: !terminal, error: null });
          if (page.more) continue; // a full page (lines or bytes): read on at once
          if (terminal) {
            if (ended) break; // read once more after the end: lines flushed late
            ended = true;
          }
        } catch (e) {
          if (signal.aborted) return;
          failures += 1;
          setStatus({ loading: false, live: false, error: (e as Error).message });
          await sleep(Math.min(30000, 1000 * 2 ** failures), signal);
        }
      }
    })();
    return () => controller.abort();
  }, [trialId, rank]);

  const matches = useMemo(() => searchLines(buffer.lines, search), [buffer.lines, search]);
  const shown = matches.length > MAX_RENDERED ? matches.slice(matches.length - MAX_RENDERED) : matches;
  const ranks = useMemo(() => ranksOf(buffer.lines, worldSize), [buffer.lines, worldSize]);

  useLayoutEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [shown, follow]);

  const onScroll = () => {
    const el = box.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (atBottom !== follow) setFollow(atBottom);
  };

  return (
    <div className="logs">
      <div className="toolbar" role="group" aria-label="Log filters">
        <label className="inline-field">
          Rank
          <select
            value={rank === null ? '' : String(rank)}
            onChange={(e) => setRank(e.target.value === '' ? null : Number(e.target.value))}
          >
            <option value="">All ranks</option>
            {ranks.map((r) => (
              <option key={r} value={r}>
                Rank {r}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field grow">
          Search
          <input
            type="search"
            value={search}
            placeholder="Text in the log lines"
            onChange={(e) => setSearch(e.target.value)}
          />
        </label>
        <label className="checkbox">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow
        </label>
        <span className="muted" aria-live="polite">
          {status.live ? '● live · ' : ''}
          {search
            ? `${formatCount(matches.length)} of ${formatCount(buffer.lines.length)} lines`
            : `${formatCount(buffer.lines.length)} lines`}
        </span>
      </div>
      {status.error && (
        <div className="stale" role="status">
          Log updates failing: {status.error}. Retrying…
        </div>
      )}
      {buffer.dropped > 0 && (
        <p className="muted small">The oldest {formatCount(buffer.dropped)} lines are not kept in the page.</p>
      )}
      <div
        className="log-box"
        ref={box}
        onScroll={onScroll}
        tabIndex={0}
        role="log"
        aria-label={`Logs of trial ${trialId}`}
        aria-live="off"
      >
        {status.loading && buffer.lines.length === 0 ? (
          <div className="log-empty">Loading logs…</div>
        ) : shown.length === 0 ? (
          <div className="log-empty">{buffer.lines.length ? 'No line matches the search.' : 'No log lines yet.'}</div>
        ) : (
          <>
            {matches.length > shown.length && (
              <div className="log-empty">
                Showing the last {formatCount(shown.length)} of {formatCount(matches.length)} lines; search to narrow.
              </div>
            )}
            {shown.map((l) => (
              <div key={l.id} className={l.stream === 'stderr' ? 'log-line log-stderr' : 'log-line'}>
                <span className="log-meta">
                  {formatLogTime(l.ts_ms)} [{l.rank}]
                </span>{' '}
                {splitMatches(l.line, search).map((part, i) =>
                  part.match ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>,
                )}
              </div>
            ))}
          </>
        )}
      </div>
    </div>
  );
}
