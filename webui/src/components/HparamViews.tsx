// How an experiment's metric depends on the hyperparameters its search
// varied: parallel coordinates of every trial and the metric against one
// hyperparameter, the best trial highlighted in both.
import { useMemo, useState } from 'react';
import type { Experiment, Trial } from '../api/types';
import { bestTrial, flattenHparams, hparamColumns } from '../lib/hparams';
import { Empty } from './DataState';
import { ParallelCoordinates } from './ParallelCoordinates';
import { ScatterPlot } from './ScatterPlot';

// The hyperparameter with the most distinct values: the most telling x axis.
export function mostVaried(trials: Trial[], names: string[]): string | undefined {
  let best: string | undefined;
  let most = -1;
  for (const n of names) {
    const distinct = new Set(trials.map((t) => JSON.stringify(flattenHparams(t.hparams)[n]))).size;
    if (distinct > most) {
      most = distinct;
      best = n;
    }
  }
  return best;
}

export function HparamViews({ experiment, trials }: { experiment: Experiment; trials: Trial[] }) {
  const columns = useMemo(() => hparamColumns(trials).filter((c) => c.varies), [trials]);
  const [x, setX] = useState<string | null>(null);
  const metric = experiment.searcher?.metric ?? 'validation';
  const smaller = experiment.searcher?.smaller_is_better ?? true;
  const best = bestTrial(trials, smaller);
  const scored = trials.filter((t) => t.best_validation !== null);
  const xName =
    x && columns.some((c) => c.name === x)
      ? x
      : mostVaried(
          trials,
          columns.map((c) => c.name),
        );
  return (
    <section className="panel" aria-labelledby="hparams-title">
      <h2 id="hparams-title">Hyperparameters and {metric}</h2>
      {columns.length === 0 ? (
        <Empty title="The search varied no hyperparameter.">
          A grid, random or ASHA search shows here how the metric depends on them.
        </Empty>
      ) : scored.length === 0 ? (
        <Empty title={`No trial has reported ${metric} yet.`} />
      ) : (
        <div className="hp-grid">
          <figure className="hp-figure">
            <figcaption>
              Parallel coordinates: each line is a trial, from its hyperparameters to its best {metric}; blue is better,
              the best is red and thick.
            </figcaption>
            <ParallelCoordinates
              trials={trials}
              hparams={columns.map((c) => c.name)}
              metric={metric}
              smallerIsBetter={smaller}
              bestId={best?.id ?? null}
            />
          </figure>
          <figure className="hp-figure">
            <figcaption>
              <label className="inline-field">
                {metric} against
                <select value={xName} onChange={(e) => setX(e.target.value)}>
                  {columns.map((c) => (
                    <option key={c.name} value={c.name}>
                      {c.name}
                    </option>
                  ))}
                </select>
              </label>
            </figcaption>
            {xName && <ScatterPlot trials={trials} hparam={xName} metric={metric} bestId={best?.id ?? null} />}
          </figure>
        </div>
      )}
    </section>
  );
}
