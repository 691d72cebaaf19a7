// The compared trials on one line chart: one metric (validation or
// training, any name one of them reports), one line per trial labelled with
// its experiment, uPlot's legend naming each.
import { useMemo } from 'react';
import type { MetricKind } from '../api/types';
import type { ComparedEntry } from '../hooks/useComparison';
import { trialLabel } from '../lib/compare';
import { formatCount } from '../lib/format';
import { alignSeries, trialSeriesToXY } from '../lib/series';
import { Empty, Loading } from './DataState';
import { LineChart } from './LineChart';

export interface CompareChartProps {
  entries: ComparedEntry[];
  colors: Map<number, string>;
  kind: MetricKind;
  metric: string | null;
  names: string[];
  loading: boolean;
  onKind: (kind: MetricKind) => void;
  onMetric: (metric: string) => void;
}

export function CompareChart({ entries, colors, kind, metric, names, loading, onKind, onMetric }: CompareChartProps) {
  const chart = useMemo(() => {
    const drawn = entries.filter((e) => e.trial && e.series && e.series.batches.length > 0);
    return {
      aligned: alignSeries(drawn.map((e) => trialSeriesToXY(e.series!))),
      series: drawn.map((e) => ({ label: trialLabel(e.trial!.experiment_id, e.id), color: colors.get(e.id)! })),
      points: drawn.reduce((n, e) => n + e.series!.total, 0),
      downsampled: drawn.some((e) => e.series!.total > e.series!.batches.length),
      without: entries.filter((e) => e.trial && !drawn.includes(e)),
    };
  }, [entries, colors]);
  const shown = metric ?? '';
  const choices = shown && !names.includes(shown) ? [shown, ...names] : names;
  return (
    <section className="panel" aria-labelledby="compare-chart-title">
      <div className="panel-head">
        <h2 id="compare-chart-title">Curves</h2>
        <div className="toolbar compact">
          <label className="inline-field">
            Kind
            <select value={kind} onChange={(e) => onKind(e.target.value as MetricKind)}>
              <option value="validation">validation</option>
              <option value="training">training</option>
            </select>
          </label>
          <label className="inline-field">
            Metric
            <select value={shown} onChange={(e) => onMetric(e.target.value)} disabled={choices.length === 0}>
              {choices.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      {chart.series.length === 0 && loading && <Loading what={`${kind} metrics`} />}
      {chart.series.length === 0 && !loading && (
        <Empty title={metric ? `No compared trial has reported ${kind} ${metric} yet.` : `No ${kind} metrics yet.`}>
          Curves appear here as the trials report them.
        </Empty>
      )}
      {chart.series.length > 0 && (
        <>
          <LineChart
            title={`${kind} ${shown} of the compared trials by batches`}
            data={chart.aligned}
            series={chart.series}
            yLabel={shown}
            height={320}
          />
          <p className="muted small">
            {chart.series.length} {chart.series.length === 1 ? 'trial' : 'trials'}, {formatCount(chart.points)} points
            {chart.downsampled ? ' (long series downsampled on the master, shape kept)' : ''}. Drag to zoom,
            double-click to reset.
            {chart.without.length > 0 &&
              ` Without ${shown} points: ${chart.without.map((e) => trialLabel(e.trial!.experiment_id, e.id)).join(', ')}.`}
          </p>
        </>
      )}
    </section>
  );
}
