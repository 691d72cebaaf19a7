// Deletes an experiment after asking (DELETE /experiments/{id}); the master
// refuses while it is active or paused, or while another experiment starts
// from one of its checkpoints, and the dialog shows its reason. Once the
// master has accepted, the page goes back to the list.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, failureText } from '../api/client';
import { keys } from '../api/queries';
import type { Experiment } from '../api/types';
import { paths } from '../paths';
import { ConfirmDialog } from './ConfirmDialog';

export function DeleteExperiment({ experiment }: { experiment: Pick<Experiment, 'id' | 'name'> }) {
  const [asking, setAsking] = useState(false);
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api.deleteExperiment(experiment.id),
    // The page leaves first; the experiment's own queries are dropped once
    // it has gone, not read again (they would answer 404 now), and the lists
    // are refreshed.
    onSuccess: () => {
      navigate(paths.experiments());
      void queryClient.invalidateQueries({ queryKey: keys.experimentLists });
      setTimeout(() => queryClient.removeQueries({ queryKey: keys.experiment(experiment.id) }), 0);
    },
  });
  return (
    <>
      <button
        type="button"
        className="btn btn-danger-outline"
        aria-label={`Delete experiment ${experiment.id}`}
        onClick={() => {
          remove.reset();
          setAsking(true);
        }}
      >
        Delete
      </button>
      {asking && (
        <ConfirmDialog
          title={`Delete experiment ${experiment.id} (${experiment.name})?`}
          confirmLabel="Delete"
          danger
          busy={remove.isPending}
          error={remove.error ? failureText(remove.error) : null}
          onConfirm={() => remove.mutate()}
          onCancel={() => setAsking(false)}
        >
          <p>
            Its trials, metrics, logs and checkpoint files are deleted with it. Only an experiment that has ended can be
            deleted. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
