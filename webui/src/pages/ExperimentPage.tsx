// One experiment: state and actions, the learning curves of all its trials,
// its trials with their hyperparameters, how the metric depends on them, and
// the config it was submitted with.
import { useEffect } from 'react';
import { api } from '../api/client';
import type { Experiment } from '../api/types';
import { BestMetric } from '../components/BestMetric';
import { ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { DownloadButton } from '../components/DownloadButton';
import { ExperimentActions } from '../components/ExperimentActions';
import { HparamViews } from '../components/HparamViews';
import { ProgressBar } from '../components/ProgressBar';
import { StateBadge } from '../components/StateBadge';
import { Curves } from '../components/TrialsChart';
import { TrialsTable } from '../components/TrialsTable';
import { useNow } from '../hooks/useNow';
import { usePoll } from '../hooks/usePoll';
import { isTerminal } from '../lib/experiments';
import { durationBetween, formatCount, formatDateTime } from '../lib/format';
import { Link, paths } from '../router';

export function ExperimentPage({ id }: { id: number }) {
  const exp = usePoll((s) => api.experiment(id, s), [id]);
  const ended = exp.data ? isTerminal(exp.data.state) : false;
  const slow = ended ? 15000 : 3000;
  const trials = usePoll((s) => api.trials(id, s), [id], slow);

  useEffect(() => {
    document.title = `${exp.data ? exp.data.name : 'Experiment'} #${id} · Ringmaster`;
  }, [exp.data, id]);

  if (exp.loading) return <Loading what={`experiment ${id}`} />;
  if (!exp.data)
    return (
      <section>
        <p className="crumbs">
          <Link href={paths.experiments()}>Experiments</Link> / {id}
        </p>
        <ErrorMessage what={`experiment ${id}`} error={exp.error!} onRetry={exp.refresh} />
      </section>
    );
  const e = exp.data;
  const list = trials.data?.trials;
  return (
    <section aria-labelledby="experiment-title">
      <ExperimentHeader e={e} onChanged={exp.refresh} />
      <StaleNotice error={exp.error ?? trials.error} />
      <Curves experiment={e} trials={list} interval={ended ? 0 : 3000} />
      <section className="panel" aria-labelledby="trials-title">
        <h2 id="trials-title">Trials</h2>
        {!list && trials.error && <ErrorMessage what="trials" error={trials.error} onRetry={trials.refresh} />}
        {!list && !trials.error && <Loading what="trials" />}
        {list && <TrialsTable experiment={e} trials={list} />}
      </section>
      {list && <HparamViews experiment={e} trials={list} />}
      <section className="panel" aria-labelledby="config-title">
        <h2 id="config-title">Configuration</h2>
        <details>
          <summary>experiment.yaml as submitted</summary>
          <pre className="code" tabIndex={0}>
            {e.config}
          </pre>
        </details>
      </section>
    </section>
  );
}

function ExperimentHeader({ e, onChanged }: { e: Experiment; onChanged: () => void }) {
  const now = useNow();
  return (
    <>
      <p className="crumbs">
        <Link href={paths.experiments()}>Experiments</Link> / {e.id}
      </p>
      <div className="page-head">
        <div>
          <h1 id="experiment-title">
            {e.name} <span className="muted">#{e.id}</span>
          </h1>
          <div className="head-line">
            <StateBadge state={e.state} />
            {e.archived && <span className="chip chip-muted">archived</span>}
            <ProgressBar value={e.progress} label={`Progress of experiment ${e.id}`} />
          </div>
        </div>
        <div className="head-actions">
          <ExperimentActions experiment={e} onDone={onChanged} />
          <DownloadButton
            path={api.modelDefinitionPath(e.id)}
            filename={`experiment_${e.id}_model_def.tar.gz`}
            label="Download model"
            ariaLabel={`Download the model definition of experiment ${e.id}`}
          />
        </div>
      </div>
      {e.description && <p className="description">{e.description}</p>}
      <dl className="facts">
        <div>
          <dt>Owner</dt>
          <dd>{e.owner}</dd>
        </div>
        <div>
          <dt>Searcher</dt>
          <dd>
            {e.searcher?.name} on {e.searcher?.metric} ({e.searcher?.smaller_is_better ? 'smaller' : 'larger'} is
            better)
          </dd>
        </div>
        <div>
          <dt>Best validation</dt>
          <dd>
            <BestMetric e={e} />
            {e.best_trial_id !== null && (
              <>
                {' '}
                in <Link href={paths.trial(e.best_trial_id)}>trial {e.best_trial_id}</Link>
              </>
            )}
          </dd>
        </div>
        <div>
          <dt>Trials</dt>
          <dd>{e.num_trials}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{formatDateTime(e.created_at)}</dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{durationBetween(e.created_at, e.ended_at, now)}</dd>
        </div>
        {e.resources && (
          <div>
            <dt>Resources</dt>
            <dd>
              {e.resources.slots_per_trial} slot{e.resources.slots_per_trial === 1 ? '' : 's'} per trial in pool{' '}
              {e.resources.resource_pool}, priority {e.resources.priority}
            </dd>
          </div>
        )}
        {e.warm_start && (
          <div>
            <dt>Warm start</dt>
            <dd>
              from checkpoint{' '}
              <code title={e.warm_start.checkpoint_uuid}>{e.warm_start.checkpoint_uuid.slice(0, 8)}</code> of{' '}
              <Link href={paths.trial(e.warm_start.trial_id)}>trial {e.warm_start.trial_id}</Link> at batch{' '}
              {formatCount(e.warm_start.batches)}
              {e.warm_start.state === 'DELETED' ? ' (since deleted)' : ''}
            </dd>
          </div>
        )}
        {e.labels?.length > 0 && (
          <div>
            <dt>Labels</dt>
            <dd>
              {e.labels.map((l) => (
                <span key={l} className="chip">
                  {l}
                </span>
              ))}
            </dd>
          </div>
        )}
      </dl>
    </>
  );
}
