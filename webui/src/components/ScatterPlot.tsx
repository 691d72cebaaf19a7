// The metric of each trial against one hyperparameter; the best trial is
// ringed. Points are links to their trials.
import { useMemo } from 'react';
import type { Trial } from '../api/types';
import { formatMetric, formatValue } from '../lib/format';
import { axisFor, axisTicks, flattenHparams, position } from '../lib/hparams';
import { useNavigate } from 'react-router';
import { paths } from '../paths';

export interface ScatterPlotProps {
  trials: Trial[];
  hparam: string;
  metric: string;
  bestId: number | null;
}

const W = 560;
const H = 300;
const L = 64;
const R = 16;
const T = 16;
const B = 44;

export function ScatterPlot({ trials, hparam, metric, bestId }: ScatterPlotProps) {
  const navigate = useNavigate();
  const model = useMemo(() => {
    const points = trials
      .filter((t) => typeof t.best_validation === 'number')
      .map((t) => ({ trial: t, x: flattenHparams(t.hparams)[hparam], y: t.best_validation as number }));
    const xAxis = axisFor(
      hparam,
      points.map((p) => p.x),
    );
    const yAxis = axisFor(
      metric,
      points.map((p) => p.y),
    );
    return { points, xAxis, yAxis };
  }, [trials, hparam, metric]);

  // A margin inside the axes, so points at the ends are not cut by them.
  const xOf = (p: number) => L + (0.04 + 0.92 * p) * (W - L - R);
  const yOf = (p: number) => T + (1 - (0.04 + 0.92 * p)) * (H - T - B);
  return (
    <svg
      className="scatter"
      viewBox={`0 0 ${W} ${H}`}
      role="group"
      aria-label={`${metric} against ${hparam}, one point per trial`}
    >
      <line x1={L} x2={W - R} y1={H - B} y2={H - B} className="pc-axis" />
      <line x1={L} x2={L} y1={T} y2={H - B} className="pc-axis" />
      {axisTicks(model.xAxis).map((t, i) => (
        <text key={`x${i}`} x={xOf(t.at)} y={H - B + 16} textAnchor="middle" className="pc-tick">
          {formatValue(t.value)}
        </text>
      ))}
      {axisTicks(model.yAxis).map((t, i) => (
        <text key={`y${i}`} x={L - 6} y={yOf(t.at) + 4} textAnchor="end" className="pc-tick">
          {formatMetric(t.value as number)}
        </text>
      ))}
      <text x={(L + W - R) / 2} y={H - 6} textAnchor="middle" className="pc-name">
        {hparam}
        {model.xAxis.kind === 'log' ? ' (log)' : ''}
      </text>
      <text
        x={14}
        y={(T + H - B) / 2}
        textAnchor="middle"
        className="pc-name"
        transform={`rotate(-90 14 ${(T + H - B) / 2})`}
      >
        {metric}
      </text>
      {model.points.map(({ trial, x, y }) => {
        const px = position(model.xAxis, x);
        const py = position(model.yAxis, y);
        if (px === null || py === null) return null;
        const best = trial.id === bestId;
        return (
          <a
            key={trial.id}
            href={paths.trial(trial.id)}
            className="scatter-point"
            data-trial={trial.id}
            onClick={(e) => {
              if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
              e.preventDefault();
              navigate(paths.trial(trial.id));
            }}
          >
            <title>{`Trial ${trial.id}${best ? ' (best)' : ''}: ${hparam}=${formatValue(x)}, ${metric}=${formatMetric(y)}`}</title>
            <circle cx={xOf(px)} cy={yOf(py)} r={best ? 7 : 5} className={best ? 'pt pt-best' : 'pt'} />
          </a>
        );
      })}
    </svg>
  );
}
