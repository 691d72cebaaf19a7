// One vertical axis per hyperparameter the search varied, plus the metric;
// one line per trial through its values, coloured from best (blue) to worst
// (orange), the best trial drawn last and thick.
import { useMemo } from 'react';
import type { Trial } from '../api/types';
import { formatValue } from '../lib/format';
import { axisFor, axisTicks, flattenHparams, position, type Axis } from '../lib/hparams';

export interface ParallelCoordinatesProps {
  trials: Trial[];
  hparams: string[];
  metric: string;
  smallerIsBetter: boolean;
  bestId: number | null;
}

const H = 300;
const TOP = 28;
const BOTTOM = 24;

export function rankColor(rank: number): string {
  // 0 = best (blue) .. 1 = worst (orange)
  const from = [47, 95, 208];
  const to = [232, 137, 40];
  const c = from.map((f, i) => Math.round(f + (to[i] - f) * rank));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

export function ParallelCoordinates({ trials, hparams, metric, smallerIsBetter, bestId }: ParallelCoordinatesProps) {
  const model = useMemo(() => {
    const rows = trials.map((t) => ({
      trial: t,
      values: { ...flattenHparams(t.hparams), [metric]: t.best_validation },
    }));
    const names = [...hparams, metric];
    const axes: Axis[] = names.map((n) =>
      axisFor(
        n,
        rows.map((r) => r.values[n]),
      ),
    );
    const scored = rows.filter((r) => typeof r.trial.best_validation === 'number');
    const sorted = [...scored].sort((a, b) =>
      smallerIsBetter
        ? a.trial.best_validation! - b.trial.best_validation!
        : b.trial.best_validation! - a.trial.best_validation!,
    );
    const rank = new Map(sorted.map((r, i) => [r.trial.id, sorted.length > 1 ? i / (sorted.length - 1) : 0]));
    return { rows, axes, rank };
  }, [trials, hparams, metric, smallerIsBetter]);

  const W = Math.max(560, 170 * model.axes.length);
  const xOf = (i: number) => 80 + (i * (W - 190)) / Math.max(1, model.axes.length - 1);
  const yOf = (p: number) => TOP + (1 - p) * (H - TOP - BOTTOM);
  const ordered = [...model.rows].sort((a, b) => Number(a.trial.id === bestId) - Number(b.trial.id === bestId));

  return (
    <svg
      className="pcoords"
      viewBox={`0 0 ${W} ${H}`}
      role="img"
      aria-label={`Parallel coordinates of ${model.rows.length} trials over ${hparams.join(', ')} and ${metric}`}
    >
      {ordered.map(({ trial, values }) => {
        const pts: string[] = [];
        model.axes.forEach((axis, i) => {
          const p = position(axis, values[axis.name]);
          if (p !== null) pts.push(`${xOf(i)},${yOf(p)}`);
        });
        const best = trial.id === bestId;
        const r = model.rank.get(trial.id);
        return (
          <polyline
            key={trial.id}
            data-trial={trial.id}
            className={best ? 'pc-line pc-best' : 'pc-line'}
            points={pts.join(' ')}
            fill="none"
            stroke={best ? '#d43d51' : r === undefined ? '#b8bec9' : rankColor(r)}
            strokeWidth={best ? 3.5 : 1.5}
            strokeDasharray={r === undefined ? '4 3' : undefined}
          >
            <title>
              {`Trial ${trial.id}${best ? ' (best)' : ''}: ` +
                model.axes.map((a) => `${a.name}=${formatValue(values[a.name])}`).join(', ')}
            </title>
          </polyline>
        );
      })}
      {model.axes.map((axis, i) => (
        <g key={axis.name} transform={`translate(${xOf(i)},0)`}>
          <line y1={TOP} y2={H - BOTTOM} className="pc-axis" />
          <text
            y={TOP - 10}
            textAnchor="middle"
            className={i === model.axes.length - 1 ? 'pc-name pc-metric' : 'pc-name'}
          >
            {axis.name}
            {axis.kind === 'log' ? ' (log)' : ''}
          </text>
          {axisTicks(axis).map((t, j) => (
            <text key={j} x={6} y={yOf(t.at) + 4} className="pc-tick">
              {formatValue(t.value)}
            </text>
          ))}
        </g>
      ))}
    </svg>
  );
}
