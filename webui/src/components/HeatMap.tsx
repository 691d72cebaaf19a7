// The searcher's metric over two hyperparameters the search varied, as a
// table: a column per value (or bin) of one, a row per value of the other,
// each cell coloured by the best or the mean metric of its trials (darker
// is better, in the metric's direction), its value written in it and
// linked to the best trial in it; cells without a trial are hatched.
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import type { Experiment, Trial } from '../api/types';
import { formatMetric } from '../lib/format';
import { flattenHparams, hparamColumns } from '../lib/hparams';
import {
  RAMP,
  colorScale,
  defaultPair,
  heatAxis,
  heatColor,
  heatGrid,
  textOn,
  type Aggregate,
  type HeatAxis,
} from '../lib/heatmap';
import { paths } from '../paths';
import { Empty } from './DataState';

export function HeatMap({ experiment, trials }: { experiment: Experiment; trials: Trial[] }) {
  const metric = experiment.searcher?.metric ?? 'validation';
  const smaller = experiment.searcher?.smaller_is_better ?? true;
  const flat = useMemo(() => trials.map((t) => ({ trial: t, hp: flattenHparams(t.hparams) })), [trials]);
  const names = useMemo(
    () =>
      hparamColumns(trials)
        .filter((c) => c.varies)
        .map((c) => c.name),
    [trials],
  );
  const pair = useMemo(
    () => defaultPair(names, (n) => new Set(flat.map((f) => JSON.stringify(f.hp[n]))).size),
    [names, flat],
  );
  const [chosenX, setX] = useState<string | null>(null);
  const [chosenY, setY] = useState<string | null>(null);
  const [aggregate, setAggregate] = useState<Aggregate>('best');
  const x = chosenX && names.includes(chosenX) ? chosenX : pair?.[0];
  const y = chosenY && names.includes(chosenY) ? chosenY : pair?.[1];

  const map = useMemo(() => {
    if (!x || !y) return null;
    const scored = flat.filter((f) => typeof f.trial.best_validation === 'number');
    const xAxis = heatAxis(
      x,
      scored.map((f) => f.hp[x]),
    );
    const yAxis = heatAxis(
      y,
      scored.map((f) => f.hp[y]),
    );
    const points = scored.map((f) => ({ id: f.trial.id, x: f.hp[x], y: f.hp[y], value: f.trial.best_validation! }));
    return { xAxis, yAxis, grid: heatGrid(points, xAxis, yAxis, aggregate, smaller), scored: scored.length };
  }, [flat, x, y, aggregate, smaller]);

  const what = `${aggregate === 'best' ? 'Best' : 'Mean'} ${metric}`;
  return (
    <section className="panel" aria-labelledby="heatmap-title">
      <h2 id="heatmap-title">Heat map of {metric}</h2>
      {!x || !y ? (
        <Empty title="A heat map needs two hyperparameters the search varied.">
          This search varied {names.length === 0 ? 'none' : `only ${names[0]}`}.
        </Empty>
      ) : (
        <>
          <div className="toolbar">
            <label className="inline-field">
              Columns (x)
              <select value={x} onChange={(e) => setX(e.target.value)}>
                {names.map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
            <label className="inline-field">
              Rows (y)
              <select value={y} onChange={(e) => setY(e.target.value)}>
                {names.map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
            <label className="inline-field">
              Cell value
              <select value={aggregate} onChange={(e) => setAggregate(e.target.value as Aggregate)}>
                <option value="best">best of its trials</option>
                <option value="mean">mean of its trials</option>
              </select>
            </label>
          </div>
          {map && map.scored === 0 ? (
            <Empty title={`No trial has reported ${metric} yet.`} />
          ) : (
            map && (
              <HeatTable
                xAxis={map.xAxis}
                yAxis={map.yAxis}
                grid={map.grid}
                what={what}
                smaller={smaller}
                sameAxis={x === y}
              />
            )
          )}
        </>
      )}
    </section>
  );
}

function HeatTable({
  xAxis,
  yAxis,
  grid,
  what,
  smaller,
  sameAxis,
}: {
  xAxis: HeatAxis;
  yAxis: HeatAxis;
  grid: ReturnType<typeof heatGrid>;
  what: string;
  smaller: boolean;
  sameAxis: boolean;
}) {
  const scale = colorScale(grid.min ?? 0, grid.max ?? 0, smaller);
  const axisNote = (a: HeatAxis) => (a.kind === 'binned' ? ` (in ${a.bins.length} bins${a.log ? ', log' : ''})` : '');
  // Rows from the largest value down, as a plot's y axis reads.
  const rowOrder = yAxis.bins.map((_, i) => i);
  if (yAxis.kind !== 'category') rowOrder.reverse();
  return (
    <figure className="heatmap">
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Heat map table">
        <table className="heat-table">
          <caption>
            {what} of the trials in each cell, by {xAxis.name}
            {axisNote(xAxis)} (columns) and {yAxis.name}
            {axisNote(yAxis)} (rows); {smaller ? 'smaller' : 'larger'} is better, darker is better.
          </caption>
          <thead>
            <tr>
              <th scope="col" className="heat-corner">
                {yAxis.name} \ {xAxis.name}
              </th>
              {xAxis.bins.map((b) => (
                <th key={b.label} scope="col">
                  {b.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rowOrder.map((yi) => (
              <tr key={yAxis.bins[yi].label}>
                <th scope="row">{yAxis.bins[yi].label}</th>
                {grid.rows[yi].map((cell, xi) => {
                  const where = `${xAxis.name} ${xAxis.bins[xi].label}, ${yAxis.name} ${yAxis.bins[yi].label}`;
                  if (cell.value === null)
                    return (
                      <td key={xi} className="heat-empty" title={`${where}: no trial`}>
                        <span aria-hidden="true">·</span>
                        <span className="sr-only">no trial</span>
                      </td>
                    );
                  const bg = heatColor(scale, cell.value);
                  const fg = textOn(bg);
                  const count = `${cell.count} ${cell.count === 1 ? 'trial' : 'trials'}`;
                  return (
                    <td
                      key={xi}
                      className="heat-cell"
                      style={{ background: bg, color: fg }}
                      data-count={cell.count}
                      title={`${where}: ${what} ${formatMetric(cell.value)} of ${count} (best: trial ${cell.bestId})`}
                    >
                      <Link to={paths.trial(cell.bestId!)} style={{ color: fg }}>
                        {formatMetric(cell.value)}
                      </Link>
                      <span className="heat-count">{cell.count > 1 ? ` ×${cell.count}` : ''}</span>
                      <span className="sr-only">, {count}</span>
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <figcaption className="heat-legend">
        <span>
          {formatMetric(smaller ? grid.max : grid.min)} (worst{grid.min === grid.max ? ', all the same' : ''})
        </span>
        <span
          className="heat-ramp"
          aria-hidden="true"
          style={{ background: `linear-gradient(to right, ${RAMP.join(', ')})` }}
        />
        <span>{formatMetric(smaller ? grid.min : grid.max)} (best)</span>
        <span className="muted small">
          {scale.log ? 'Colours on a log scale. ' : ''}
          {sameAxis ? 'Both axes are the same hyperparameter. ' : ''}
          {grid.skipped > 0
            ? `${grid.skipped} ${grid.skipped === 1 ? 'trial lacks' : 'trials lack'} one of the two and ${grid.skipped === 1 ? 'is' : 'are'} left out. `
            : ''}
          Each value links to the best trial of its cell.
        </span>
      </figcaption>
    </figure>
  );
}
