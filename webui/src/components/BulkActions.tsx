// The toolbar over the experiment list's selected rows: compare their trials
// (the Compare page), pause, activate, kill, archive, unarchive or delete
// them all, behind one confirmation, or move them to another project
// (MoveDialog); each
// experiment goes through its own route, and the ones the master refused are
// listed with its message (the others are done).
import { useState } from 'react';
import { api } from '../api/client';
import type { Experiment } from '../api/types';
import {
  BULK_ACTIONS,
  bulkDanger,
  bulkExplain,
  bulkLabel,
  bulkSummary,
  moveSummary,
  runBulk,
  selectionTitle,
  type BulkAction,
  type BulkFailure,
} from '../lib/bulk';
import { ConfirmDialog } from './ConfirmDialog';
import { Link } from 'react-router';
import { compareSearch } from '../lib/compare';
import { paths } from '../paths';
import { MoveDialog } from './MoveDialog';

export function BulkActions({
  experiments,
  onDone,
}: {
  experiments: Pick<Experiment, 'id' | 'name' | 'project_id'>[];
  onDone: (summary: string) => void;
}) {
  const [pending, setPending] = useState<BulkAction | null>(null);
  const [moving, setMoving] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failures, setFailures] = useState<BulkFailure[]>([]);

  const run = async () => {
    if (!pending) return;
    const action = pending;
    setBusy(true);
    const result = await runBulk(
      experiments.map((e) => e.id),
      (id) => (action === 'delete' ? api.deleteExperiment(id) : api.experimentAction(id, action)),
    );
    setBusy(false);
    setPending(null);
    setFailures(result.failed);
    onDone(bulkSummary(action, result));
  };

  return (
    <>
      {failures.length > 0 && (
        <div className="state-box state-error bulk-failures" role="alert">
          <strong>Some experiments were not changed:</strong>
          <ul>
            {failures.map((f) => (
              <li key={f.id} data-failed={f.id}>
                Experiment {f.id}: {f.message}
              </li>
            ))}
          </ul>
          <button type="button" className="btn btn-small" onClick={() => setFailures([])}>
            Dismiss
          </button>
        </div>
      )}
      {experiments.length > 0 && (
        <div className="bulk-bar" role="toolbar" aria-label="Act on the selected experiments">
          <span className="bulk-count">{experiments.length} selected</span>
          <Link
            className="btn btn-small"
            to={paths.compare(compareSearch({ experiments: experiments.map((e) => e.id) }))}
          >
            Compare
          </Link>
          {BULK_ACTIONS.map((a) => (
            <button
              key={a}
              type="button"
              className={`btn btn-small ${bulkDanger(a) ? 'btn-danger-outline' : ''}`}
              onClick={() => setPending(a)}
            >
              {bulkLabel(a)}
            </button>
          ))}
          <button type="button" className="btn btn-small" onClick={() => setMoving(true)}>
            Move
          </button>
        </div>
      )}
      {moving && (
        <MoveDialog
          experiments={experiments}
          onCancel={() => setMoving(false)}
          onMoved={(result, target) => {
            setMoving(false);
            setFailures(result.failed);
            onDone(moveSummary(target, result));
          }}
        />
      )}
      {pending && (
        <ConfirmDialog
          title={selectionTitle(pending, experiments)}
          confirmLabel={bulkLabel(pending)}
          danger={bulkDanger(pending)}
          busy={busy}
          onConfirm={() => void run()}
          onCancel={() => setPending(null)}
        >
          <p>{bulkExplain(pending)}</p>
        </ConfirmDialog>
      )}
    </>
  );
}
