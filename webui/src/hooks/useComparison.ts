// What the Compare page reads for trials of any experiments: each trial once
// (for its experiment, or why it cannot be read), then per experiment
// involved its record, its trials (live state and best metric), the metric
// names its trials report and one metric of every trial, so the requests
// grow with the experiments compared, not with the trials.
import { useQueries } from '@tanstack/react-query';
import { ApiError } from '../api/client';
import { queries } from '../api/queries';
import type { Experiment, MetricKind, Trial, TrialSeries } from '../api/types';
import { unionNames } from '../lib/compare';
import { isTerminal } from '../lib/experiments';
import { pickMetric, pointsPerTrial } from '../lib/series';

export interface ComparedEntry {
  id: number;
  trial: Trial | null; // null while loading or when it cannot be read
  experiment: Experiment | null;
  series: TrialSeries | null; // of the metric drawn
  problem: string | null; // why the trial is not shown
}

export interface Comparison {
  entries: ComparedEntry[];
  metric: string | null; // the metric drawn
  names: string[]; // every metric of this kind the experiments report
  loading: boolean; // the trials, or the metric's series, are not all here yet
  error: Error | null; // a refresh that failed (the shown data stays)
}

// Why a trial or experiment cannot be shown: unknown ids and ones the user
// may not read look the same to them.
export function unreadable(what: string, error: Error | null): string {
  if (error instanceof ApiError && (error.status === 404 || error.status === 403))
    return `${what} does not exist or is not visible to you.`;
  return `Could not load ${what}: ${error?.message ?? 'unknown error'}`;
}

export function useComparison(ids: number[], kind: MetricKind, wanted: string | null): Comparison {
  // An id's experiment never changes: each trial is read once here.
  const refs = useQueries({
    queries: ids.map((id) => ({ ...queries.trial(id), refetchInterval: false as const, staleTime: Infinity })),
  });
  const expIds: number[] = [];
  for (const r of refs) if (r.data && !expIds.includes(r.data.experiment_id)) expIds.push(r.data.experiment_id);

  const exps = useQueries({ queries: expIds.map((e) => queries.experiment(e, 15000)) });
  const ended = expIds.map((_, i) => {
    const data = exps[i]?.data;
    return data ? isTerminal(data.state) : false;
  });
  const lists = useQueries({
    queries: expIds.map((e, i) => queries.experimentTrials(e, ended[i] ? 15000 : 3000)),
  });
  // The names alone: two points per trial are enough to learn them.
  const nameAnswers = useQueries({
    queries: expIds.map((e, i) => queries.experimentMetrics(e, kind, null, 2, ended[i])),
  });
  const namesLoaded = nameAnswers.every((n) => n.data);
  const names = unionNames(nameAnswers.map((n) => n.data?.metric_names ?? []));
  const first = exps[0]?.data;
  const metric =
    wanted && (names.includes(wanted) || !namesLoaded)
      ? wanted
      : pickMetric(names, kind === 'validation' ? first?.searcher?.metric : 'loss', nameAnswers[0]?.data?.metric);

  const maxPoints = pointsPerTrial(ids.length);
  const seriesAnswers = useQueries({
    queries: expIds.map((e, i) => ({
      ...queries.experimentMetrics(e, kind, metric, maxPoints, ended[i]),
      enabled: metric !== null,
    })),
  });

  const entries = ids.map((id, i): ComparedEntry => {
    const ref = refs[i];
    if (!ref?.data)
      return {
        id,
        trial: null,
        experiment: null,
        series: null,
        problem: ref?.error ? unreadable(`Trial ${id}`, ref.error) : null,
      };
    const e = expIds.indexOf(ref.data.experiment_id);
    const live = lists[e]?.data?.trials.find((t) => t.id === id);
    return {
      id,
      trial: live ?? ref.data,
      experiment: exps[e]?.data ?? null,
      series: seriesAnswers[e]?.data?.series.find((s) => s.trial_id === id) ?? null,
      problem: null,
    };
  });
  const loading =
    refs.some((r) => r.isPending) ||
    !namesLoaded ||
    (metric !== null && seriesAnswers.some((s) => s.isPending && s.fetchStatus !== 'idle'));
  const error = [...exps, ...lists, ...nameAnswers, ...seriesAnswers].find((q) => q.error)?.error ?? null;
  return { entries, metric, names, loading, error };
}
