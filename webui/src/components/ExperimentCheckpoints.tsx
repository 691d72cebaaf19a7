// The checkpoints an experiment keeps (GET /experiments/{id}/checkpoints),
// each with its trial, the best by the searcher's metric marked; each can be
// registered as a model version.
import { useQuery } from '@tanstack/react-query';
import { queries } from '../api/queries';
import type { Checkpoint, Experiment } from '../api/types';
import { isTerminal } from '../lib/experiments';
import { CheckpointsTable, bestCheckpoint } from './CheckpointsTable';
import { ErrorMessage, Loading } from './DataState';
import { RegisterVersion } from './RegisterVersion';

const registerAction = (c: Checkpoint) => <RegisterVersion checkpoint={c} />;

export function ExperimentCheckpoints({ experiment }: { experiment: Experiment }) {
  const list = useQuery(queries.experimentCheckpoints(experiment.id, isTerminal(experiment.state) ? 15000 : 5000));
  const checkpoints = list.data?.checkpoints;
  return (
    <section className="panel" aria-labelledby="checkpoints-title">
      <h2 id="checkpoints-title">Checkpoints</h2>
      {checkpoints ? (
        <CheckpointsTable
          checkpoints={checkpoints}
          showTrial
          best={bestCheckpoint(checkpoints, experiment.searcher?.smaller_is_better ?? true)}
          actions={registerAction}
        />
      ) : list.error ? (
        <ErrorMessage what="checkpoints" error={list.error} onRetry={() => void list.refetch()} />
      ) : (
        <Loading what="checkpoints" />
      )}
    </section>
  );
}
