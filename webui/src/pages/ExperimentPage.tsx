// One experiment: state and actions (pause, kill, edit, fork, move, delete),
// its workspace and project, the
// learning curves of all its trials, its trials with their hyperparameters
// (each can be killed), how the metric depends on them (a heat map over two
// of them too), a link adding its trials to the comparison, the files of its
// model definition, and the config it was submitted with.
import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { queries } from '../api/queries';
import type { Experiment } from '../api/types';
import { useSession } from '../auth/session';
import { BestMetric } from '../components/BestMetric';
import { CompareLink } from '../components/CompareLink';
import { ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { DeleteExperiment } from '../components/DeleteExperiment';
import { EditExperiment } from '../components/EditExperiment';
import { EditRetention, retentionText, useRetention } from '../components/EditRetention';
import { ExperimentActions } from '../components/ExperimentActions';
import { ExperimentCheckpoints } from '../components/ExperimentCheckpoints';
import { HeatMap } from '../components/HeatMap';
import { HparamViews } from '../components/HparamViews';
import { ModelFiles } from '../components/ModelFiles';
import { MoveButton } from '../components/MoveDialog';
import { ProgressBar } from '../components/ProgressBar';
import { StateBadge } from '../components/StateBadge';
import { Curves } from '../components/TrialsChart';
import { TrialsTable } from '../components/TrialsTable';
import { useNow } from '../hooks/useNow';
import { DEFAULT_LIST_QUERY, isTerminal, listQueryToSearch, mayChange } from '../lib/experiments';
import { durationBetween, formatCount, formatDateTime } from '../lib/format';
import { paths } from '../paths';

export function ExperimentPage({ id }: { id: number }) {
  const exp = useQuery(queries.experiment(id));
  const ended = exp.data ? isTerminal(exp.data.state) : false;
  const trials = useQuery(queries.experimentTrials(id, ended ? 15000 : 3000));

  useEffect(() => {
    document.title = `${exp.data ? exp.data.name : 'Experiment'} #${id} · Ringmaster`;
  }, [exp.data, id]);

  if (exp.isPending) return <Loading what={`experiment ${id}`} />;
  if (!exp.data)
    return (
      <section>
        <p className="crumbs">
          <Link to={paths.experiments()}>Experiments</Link> / {id}
        </p>
        <ErrorMessage what={`experiment ${id}`} error={exp.error} onRetry={() => void exp.refetch()} />
      </section>
    );
  const e = exp.data;
  const list = trials.data?.trials;
  return (
    <section aria-labelledby="experiment-title">
      <ExperimentHeader e={e} />
      <StaleNotice error={exp.error ?? trials.error} />
      <Curves experiment={e} trials={list} interval={ended ? 0 : 3000} />
      <section className="panel" aria-labelledby="trials-title">
        <h2 id="trials-title">Trials</h2>
        {!list && trials.error && (
          <ErrorMessage what="trials" error={trials.error} onRetry={() => void trials.refetch()} />
        )}
        {!list && !trials.error && <Loading what="trials" />}
        {list && <TrialsTable experiment={e} trials={list} />}
      </section>
      {list && <HparamViews experiment={e} trials={list} />}
      {list && <HeatMap experiment={e} trials={list} />}
      <ExperimentCheckpoints experiment={e} />
      <ModelFiles experimentId={e.id} />
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

function ExperimentHeader({ e }: { e: Experiment }) {
  const now = useNow();
  const { session } = useSession();
  const [editing, setEditing] = useState<'details' | 'retention' | null>(null);
  const mine = mayChange(session, e);
  const retention = useRetention(e);
  return (
    <>
      <p className="crumbs">
        <Link to={paths.experiments()}>Experiments</Link> / {e.id}
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
          <ExperimentActions experiment={e} />
          {mine && !editing && (
            <>
              <button
                type="button"
                className="btn"
                aria-label={`Edit experiment ${e.id}`}
                onClick={() => setEditing('details')}
              >
                Edit
              </button>
              <button
                type="button"
                className="btn"
                aria-label={`Edit retention of experiment ${e.id}`}
                onClick={() => setEditing('retention')}
              >
                Retention
              </button>
            </>
          )}
          <Link to={paths.experimentFork(e.id)} className="btn" aria-label={`Fork experiment ${e.id}`}>
            Fork
          </Link>
          <CompareLink experiments={[e.id]} label={`Compare the trials of experiment ${e.id}`} />
          {mine && <MoveButton experiment={e} />}
          {mine && <DeleteExperiment experiment={e} />}
        </div>
      </div>
      {editing === 'details' && <EditExperiment experiment={e} onClose={() => setEditing(null)} />}
      {editing === 'retention' && <EditRetention experiment={e} onClose={() => setEditing(null)} />}
      {e.description && <p className="description">{e.description}</p>}
      <dl className="facts">
        <div>
          <dt>Owner</dt>
          <dd>{e.owner}</dd>
        </div>
        {e.project_id !== undefined && e.workspace_id !== undefined && (
          <div>
            <dt>Project</dt>
            <dd>
              <Link to={paths.workspace(e.workspace_id)}>{e.workspace}</Link> /{' '}
              <Link
                to={paths.experiments(
                  listQueryToSearch({ ...DEFAULT_LIST_QUERY, workspace: e.workspace_id, project: e.project_id }),
                )}
              >
                {e.project}
              </Link>
            </dd>
          </div>
        )}
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
                in <Link to={paths.trial(e.best_trial_id)}>trial {e.best_trial_id}</Link>
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
        {e.forked_from !== null && e.forked_from !== undefined && (
          <div>
            <dt>Forked from</dt>
            <dd>
              <Link to={paths.experiment(e.forked_from)}>experiment {e.forked_from}</Link>
            </dd>
          </div>
        )}
        {e.warm_start && (
          <div>
            <dt>Warm start</dt>
            <dd>
              Continues <Link to={paths.trial(e.warm_start.trial_id)}>trial {e.warm_start.trial_id}</Link> of{' '}
              <Link to={paths.experiment(e.warm_start.experiment_id)}>experiment {e.warm_start.experiment_id}</Link>{' '}
              (checkpoint <code title={e.warm_start.checkpoint_uuid}>{e.warm_start.checkpoint_uuid.slice(0, 8)}</code>{' '}
              at {formatCount(e.warm_start.batches)} batches{e.warm_start.state === 'DELETED' ? ', since deleted' : ''})
            </dd>
          </div>
        )}
        <div>
          <dt>Retention</dt>
          <dd>{retentionText(retention)}</dd>
        </div>
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
