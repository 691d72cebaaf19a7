// Validation and training curves of every trial of an experiment, side by
// side: one request per chart however many trials there are, each trial's
// series downsampled on the master.
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { queries } from '../api/queries';
import type { Experiment, MetricKind, Trial } from '../api/types';
import { formatCount } from '../lib/format';
import { alignSeries, pointsPerTrial, seriesColor, trialSeriesToXY } from '../lib/series';
import { Empty, ErrorMessage, Loading } from './DataState';
import { LineChart } from './LineChart';

export function Curves({
  experiment,
  trials,
  interval,
}: {
  experiment: Experiment;
  trials: Trial[] | undefined;
  interval: number;
}) {
  return (
    <section className="panel" aria-labelledby="curves-title">
      <h2 id="curves-title">Learning curves</h2>
      <div className="chart-pair">
        <TrialsChart experiment={experiment} trials={trials} kind="validation" interval={interval} />
        <TrialsChart experiment={experiment} trials={trials} kind="training" interval={interval} />
      </div>
    </section>
  );
}

function TrialsChart({
  experiment,
  trials,
  kind,
  interval,
}: {
  experiment: Experiment;
  trials: Trial[] | undefined;
  kind: MetricKind;
  interval: number;
}) {
  const [metric, setMetric] = useState<string | null>(null); // null: the master's choice
  const maxPoints = pointsPerTrial(trials?.length ?? experiment.num_trials);
  const curves = useQuery(queries.experimentMetrics(experiment.id, kind, metric, maxPoints, interval <= 0));
  const best = experiment.best_trial_id;

  const chart = useMemo(() => {
    const data = curves.data;
    if (!data) return null;
    const withPoints = data.series.filter((s) => s.batches.length > 0);
    const order = new Map((trials ?? []).map((t, i) => [t.id, i]));
    return {
      aligned: alignSeries(withPoints.map(trialSeriesToXY)),
      series: withPoints.map((s) => ({
        label: `Trial ${s.trial_id}${s.trial_id === best ? ' (best)' : ''}`,
        color: s.trial_id === best ? '#d43d51' : seriesColor(order.get(s.trial_id) ?? s.trial_id),
        width: s.trial_id === best ? 3 : 1.5,
      })),
      downsampled: withPoints.some((s) => s.total > s.batches.length),
      points: withPoints.reduce((n, s) => n + s.total, 0),
    };
  }, [curves.data, trials, best]);

  const names = curves.data?.metric_names ?? [];
  const shown = curves.data?.metric ?? metric ?? '';
  const title = kind === 'validation' ? 'Validation' : 'Training';
  return (
    <div className="chart-block">
      <div className="panel-head">
        <h3>{title}</h3>
        {names.length > 1 && (
          <label className="inline-field">
            Metric
            <select value={shown} onChange={(e) => setMetric(e.target.value)}>
              {names.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        )}
      </div>
      {curves.isPending && <Loading what={`${kind} metrics`} />}
      {!curves.data && curves.error && (
        <ErrorMessage what={`${kind} metrics`} error={curves.error} onRetry={() => void curves.refetch()} />
      )}
      {chart && chart.series.length === 0 && (
        <Empty title={`No ${kind} metrics reported yet.`}>Curves appear here as the trials report them.</Empty>
      )}
      {chart && chart.series.length > 0 && (
        <>
          <LineChart
            title={`${kind} ${shown} of every trial by batches`}
            data={chart.aligned}
            series={chart.series}
            yLabel={shown}
            height={260}
          />
          <p className="muted small">
            {chart.series.length} {chart.series.length === 1 ? 'trial' : 'trials'}, {formatCount(chart.points)} points
            {chart.downsampled ? ' (long series downsampled on the master, shape kept)' : ''}. Drag to zoom,
            double-click to reset.
          </p>
        </>
      )}
    </div>
  );
}
