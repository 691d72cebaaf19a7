// Moves experiments to another project (POST /experiments/{id}/move, one
// after another): a dialog with the projects the user may move to, those of
// the workspaces they see (an admin: all) that are not archived, grouped by
// workspace. One experiment's refusal stays in the dialog; several
// experiments' are handed to the caller, which lists them (BulkActions).
import { useQueries, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Experiment } from '../api/types';
import { moveTitle, runBulk, type BulkResult } from '../lib/bulk';
import { moveTargets, placeText, type ProjectGroup } from '../lib/workspaces';
import { ConfirmDialog } from './ConfirmDialog';

// The projects experiments may go to (moved, or a fork submitted): those of
// the user's workspaces (an admin's: all) that are not archived, read once.
export function useProjectTargets() {
  const workspaces = useQuery({ ...queries.workspaceList({ archived: 'false' }, 0), staleTime: 30000 });
  const list = workspaces.data?.workspaces ?? [];
  const projects = useQueries({
    queries: list.map((w) => ({ ...queries.workspaceProjects(w.id, 0), staleTime: 30000 })),
  });
  const groups = moveTargets(list, (id) => projects[list.findIndex((w) => w.id === id)]?.data?.projects);
  return {
    groups,
    loading: workspaces.isPending || projects.some((p) => p.isPending),
    error: workspaces.error ?? projects.find((p) => p.error)?.error ?? null,
  };
}

// The options of a project select, grouped by workspace; `here` is marked
// (and, with disableHere, cannot be chosen).
export function ProjectOptions({
  groups,
  here,
  disableHere,
}: {
  groups: ProjectGroup[];
  here?: number;
  disableHere?: boolean;
}) {
  return (
    <>
      {groups.map((g) => (
        <optgroup key={g.workspace.id} label={g.workspace.name}>
          {g.projects.map((p) => (
            <option key={p.id} value={p.id} disabled={disableHere && p.id === here}>
              {placeText(g.workspace.name, p.name)}
              {p.id === here ? (disableHere ? ' (where it is)' : ' (its parent’s)') : ''}
            </option>
          ))}
        </optgroup>
      ))}
    </>
  );
}

export function MoveDialog({
  experiments,
  onCancel,
  onMoved,
}: {
  experiments: Pick<Experiment, 'id' | 'project_id'>[];
  onCancel: () => void;
  onMoved: (result: BulkResult, target: string) => void;
}) {
  const queryClient = useQueryClient();
  const hintId = useId();
  const { groups, loading, error: loadError } = useProjectTargets();
  const [choice, setChoice] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const targetName = () => {
    for (const g of groups) for (const p of g.projects) if (p.id === choice) return placeText(g.workspace.name, p.name);
    return `project ${choice}`;
  };
  const run = async () => {
    if (!choice) {
      setError('Choose the project to move to.');
      return;
    }
    setBusy(true);
    setError(null);
    const result = await runBulk(
      experiments.map((e) => e.id),
      (id) => api.moveExperiment(id, choice),
    );
    setBusy(false);
    void queryClient.invalidateQueries({ queryKey: keys.experiments });
    void queryClient.invalidateQueries({ queryKey: keys.workspaces });
    if (experiments.length === 1 && result.failed.length === 1) {
      setError(result.failed[0].message);
      return;
    }
    onMoved(result, targetName());
  };

  const here = experiments.length === 1 ? experiments[0].project_id : undefined;
  return (
    <ConfirmDialog
      title={`${moveTitle(experiments)} to another project`}
      confirmLabel="Move"
      form
      busy={busy}
      error={error ?? (loadError ? `Could not load the projects: ${failureText(loadError)}` : null)}
      onConfirm={() => void run()}
      onCancel={onCancel}
    >
      <label className="field">
        Project
        <select value={choice} onChange={(e) => setChoice(Number(e.target.value))} aria-describedby={hintId}>
          <option value={0} disabled>
            {loading ? 'Loading projects…' : 'Choose a project'}
          </option>
          <ProjectOptions groups={groups} here={here} disableHere />
        </select>
      </label>
      <p id={hintId} className="muted small">
        The projects of your workspaces that are not archived. Its owner or an admin moves an experiment; its trials,
        checkpoints and logs go with it.
      </p>
    </ConfirmDialog>
  );
}

// The experiment page's Move: a button opening the dialog for one experiment.
export function MoveButton({ experiment }: { experiment: Pick<Experiment, 'id' | 'project_id'> }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button
        type="button"
        className="btn"
        aria-label={`Move experiment ${experiment.id} to another project`}
        onClick={() => setOpen(true)}
      >
        Move
      </button>
      {open && <MoveDialog experiments={[experiment]} onCancel={() => setOpen(false)} onMoved={() => setOpen(false)} />}
    </>
  );
}
