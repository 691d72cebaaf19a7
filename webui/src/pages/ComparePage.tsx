// Trials of any experiments side by side: one metric of each on one chart,
// and their hyperparameters and metrics in one table. The URL is the
// comparison (lib/compare.ts): trials are added by id here, or with all the
// trials of experiments (?experiments=, which the page expands into the
// trials they have now), and removed row by row.
import { useQueries, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { Link, useLocation, useNavigate } from 'react-router';
import { queries } from '../api/queries';
import type { MetricKind } from '../api/types';
import { CompareChart } from '../components/CompareChart';
import { CompareTable } from '../components/CompareTable';
import { Empty, StaleNotice } from '../components/DataState';
import { unreadable, useComparison } from '../hooks/useComparison';
import {
  compareSearch,
  mergeIds,
  parseCompareQuery,
  parseIds,
  rememberComparison,
  type ComparedTrial,
  type CompareQuery,
} from '../lib/compare';
import { seriesColor } from '../lib/series';
import { paths } from '../paths';

export function ComparePage() {
  const { search } = useLocation();
  const navigate = useNavigate();
  const q = useMemo(() => parseCompareQuery(search), [search]);
  // What adding experiments or trials found wrong, until the next addition.
  const [notices, setNotices] = useState<string[]>([]);
  const go = (next: Partial<CompareQuery>) =>
    navigate(paths.compare(compareSearch({ ...q, ...next })), { replace: true });

  useEffect(() => {
    document.title = 'Compare trials · Ringmaster';
  }, []);
  useEffect(() => {
    if (q.experiments.length === 0) rememberComparison(q.trials);
  }, [q.experiments.length, q.trials]);

  useExpandExperiments(q, setNotices);
  const comparison = useComparison(q.trials, q.kind, q.metric);
  const colors = useMemo(() => new Map(q.trials.map((id, i) => [id, seriesColor(i)])), [q.trials]);
  const rows = useMemo(
    (): ComparedTrial[] =>
      comparison.entries
        .filter((e) => e.trial)
        .map((e) => ({
          trial: e.trial!,
          experiment: e.experiment,
          color: colors.get(e.id)!,
          latest: e.series?.values.at(-1) ?? null,
        })),
    [comparison.entries, colors],
  );
  const problems = comparison.entries.filter((e) => e.problem);
  const remove = (id: number) => go({ trials: q.trials.filter((t) => t !== id) });

  return (
    <section aria-labelledby="compare-title">
      <div className="page-head">
        <div>
          <h1 id="compare-title">Compare trials</h1>
          <p className="muted">
            Trials of any experiments on one chart. The address of this page is the comparison: share it to show the
            same trials.
          </p>
        </div>
        {q.trials.length > 0 && (
          <div className="head-actions">
            <button type="button" className="btn" onClick={() => go({ trials: [], experiments: [] })}>
              Clear
            </button>
          </div>
        )}
      </div>
      <AddForms
        trials={q.trials}
        onNotices={setNotices}
        onAddTrials={(ids) => go({ trials: mergeIds(q.trials, ids) })}
        onAddExperiments={(ids) => go({ experiments: mergeIds(q.experiments, ids) })}
      />
      {(notices.length > 0 || q.ignored.length > 0) && (
        <div className="state-box state-error" role="alert">
          <ul className="plain-list compare-notices">
            {q.ignored.length > 0 && <li>Not an id, left out: {q.ignored.join(', ')}</li>}
            {notices.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        </div>
      )}
      {problems.length > 0 && (
        <div className="state-box state-error" role="alert">
          <ul className="plain-list compare-notices">
            {problems.map((e) => (
              <li key={e.id}>
                {e.problem}{' '}
                <button
                  type="button"
                  className="btn btn-small"
                  aria-label={`Remove trial ${e.id} from the comparison`}
                  onClick={() => remove(e.id)}
                >
                  Remove
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      <StaleNotice error={comparison.error} />
      {q.trials.length === 0 && q.experiments.length === 0 ? (
        <Empty title="Nothing to compare yet.">
          Add trials by id above, select experiments in the <Link to={paths.experiments()}>experiment list</Link> and
          choose <strong>Compare</strong>, or use <strong>Compare</strong> on an experiment or a trial.
        </Empty>
      ) : (
        <>
          <CompareChart
            entries={comparison.entries}
            colors={colors}
            kind={q.kind}
            metric={comparison.metric}
            names={comparison.names}
            loading={comparison.loading || q.experiments.length > 0}
            onKind={(kind: MetricKind) => go({ kind, metric: null })}
            onMetric={(metric) => go({ metric })}
          />
          <section className="panel" aria-labelledby="compare-table-title">
            <h2 id="compare-table-title">Trials</h2>
            {rows.length > 0 ? (
              <CompareTable rows={rows} metric={comparison.metric} onRemove={remove} />
            ) : (
              comparison.loading && <p className="muted">Loading the trials…</p>
            )}
          </section>
        </>
      )}
    </section>
  );
}

// ?experiments=3,4 becomes the trials those experiments have, added to the
// URL's trials; experiments that cannot be read, or have no trials yet, are
// named in the notices.
function useExpandExperiments(q: CompareQuery, setNotices: (n: string[]) => void) {
  const navigate = useNavigate();
  const answers = useQueries({
    queries: q.experiments.map((e) => ({ ...queries.experimentTrials(e), refetchInterval: false as const })),
  });
  const settled = answers.length > 0 && answers.every((a) => !a.isPending);
  const found = settled
    ? answers.map((a, i) =>
        a.data
          ? { trials: a.data.trials.map((t) => t.id).sort((x, y) => x - y), problem: null }
          : { trials: [], problem: unreadable(`Experiment ${q.experiments[i]}`, a.error) },
      )
    : null;
  const key = found ? JSON.stringify(found) : null;
  useEffect(() => {
    if (!found) return;
    const notices: string[] = [];
    found.forEach((f, i) => {
      if (f.problem) notices.push(f.problem);
      else if (f.trials.length === 0) notices.push(`Experiment ${q.experiments[i]} has no trials yet.`);
    });
    setNotices(notices);
    const trials = found.reduce((all, f) => mergeIds(all, f.trials), q.trials);
    navigate(paths.compare(compareSearch({ ...q, trials, experiments: [] })), { replace: true });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
}

// Adding trials by id (several at once: "4, 7 12"), each checked with the
// master first, and all the trials of experiments.
function AddForms({
  trials,
  onNotices,
  onAddTrials,
  onAddExperiments,
}: {
  trials: number[];
  onNotices: (problems: string[]) => void;
  onAddTrials: (ids: number[]) => void;
  onAddExperiments: (ids: number[]) => void;
}) {
  const queryClient = useQueryClient();
  const [trialText, setTrialText] = useState('');
  const [expText, setExpText] = useState('');
  const [busy, setBusy] = useState(false);

  const addTrials = async (ev: FormEvent) => {
    ev.preventDefault();
    const { ids, ignored } = parseIds(trialText);
    const problems = ignored.map((p) => `"${p}" is not a trial id.`);
    const fresh = ids.filter((id) => !trials.includes(id));
    for (const id of ids) if (trials.includes(id)) problems.push(`Trial ${id} is compared already.`);
    if (ids.length === 0 && ignored.length === 0) problems.push('Enter the id of a trial to add.');
    setBusy(true);
    const checked = await Promise.all(
      fresh.map((id) =>
        queryClient
          .fetchQuery(queries.trial(id))
          .then(() => ({ id, problem: null as string | null }))
          .catch((e: Error) => ({ id, problem: unreadable(`Trial ${id}`, e) })),
      ),
    );
    setBusy(false);
    const added = checked.filter((c) => !c.problem).map((c) => c.id);
    problems.push(...checked.flatMap((c) => (c.problem ? [c.problem] : [])));
    if (problems.length === 0) setTrialText('');
    onNotices(problems);
    if (added.length) onAddTrials(added);
  };

  const addExperiments = (ev: FormEvent) => {
    ev.preventDefault();
    const { ids, ignored } = parseIds(expText);
    if (ids.length === 0 || ignored.length > 0) {
      onNotices([ignored.length ? `"${ignored[0]}" is not an experiment id.` : 'Enter the id of an experiment.']);
      return;
    }
    setExpText('');
    onNotices([]);
    onAddExperiments(ids);
  };

  return (
    <div className="toolbar">
      <form className="compare-add" aria-label="Add trials" onSubmit={(e) => void addTrials(e)}>
        <label className="inline-field">
          Trial ids
          <input
            type="text"
            inputMode="numeric"
            value={trialText}
            placeholder="e.g. 12, 15"
            onChange={(e) => setTrialText(e.target.value)}
          />
        </label>
        <button type="submit" className="btn" disabled={busy}>
          Add
        </button>
      </form>
      <form className="compare-add" aria-label="Add an experiment's trials" onSubmit={addExperiments}>
        <label className="inline-field">
          Experiment id
          <input
            type="text"
            inputMode="numeric"
            value={expText}
            placeholder="e.g. 3"
            onChange={(e) => setExpText(e.target.value)}
          />
        </label>
        <button type="submit" className="btn">
          Add its trials
        </button>
      </form>
    </div>
  );
}
