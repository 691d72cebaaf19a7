// Checkpoints, newest first: a trial's, or an experiment's (with the trial
// each came from and the best marked). Each one still on disk can be
// downloaded, and `actions` adds what else may be done with it (register it
// as a model version).
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { api } from '../api/client';
import type { Checkpoint } from '../api/types';
import { formatBytes, formatCount, formatDateTime, formatMetric } from '../lib/format';
import { paths } from '../paths';
import { Empty } from './DataState';
import { DownloadButton } from './DownloadButton';

// The checkpoint with the best validation metric, or null when none has one.
export function bestCheckpoint(checkpoints: Checkpoint[], smallerIsBetter: boolean): Checkpoint | null {
  let best: Checkpoint | null = null;
  for (const c of checkpoints) {
    if (c.state === 'DELETED' || c.validation_metric === null || c.validation_metric === undefined) continue;
    const v = c.validation_metric;
    const b = best?.validation_metric;
    if (best === null || b === null || b === undefined || (smallerIsBetter ? v < b : v > b)) best = c;
  }
  return best;
}

export function CheckpointsTable({
  checkpoints,
  showTrial,
  best,
  actions,
}: {
  checkpoints: Checkpoint[];
  showTrial?: boolean;
  best?: Checkpoint | null;
  actions?: (c: Checkpoint) => ReactNode;
}) {
  if (checkpoints.length === 0) return <Empty title="No checkpoints yet." />;
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label="Checkpoints table">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">UUID</th>
            {showTrial && <th scope="col">Trial</th>}
            <th scope="col" className="col-num">
              Batches
            </th>
            <th scope="col">State</th>
            <th scope="col" className="col-num">
              Files
            </th>
            <th scope="col" className="col-num">
              Size
            </th>
            <th scope="col" className="col-num">
              Validation
            </th>
            <th scope="col">Saved</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {[...checkpoints].reverse().map((c) => {
            const isBest = best?.uuid === c.uuid;
            return (
              <tr
                key={c.uuid}
                data-checkpoint={c.uuid}
                className={c.state === 'DELETED' ? 'row-muted' : isBest ? 'row-best' : undefined}
              >
                <td>
                  <code title={c.uuid}>{c.uuid.slice(0, 8)}</code>
                  {isBest && (
                    <span className="best-mark" title="best checkpoint">
                      {' '}
                      ★<span className="sr-only"> best checkpoint</span>
                    </span>
                  )}
                </td>
                {showTrial && (
                  <td>
                    <Link to={paths.trial(c.trial_id)}>trial {c.trial_id}</Link>
                  </td>
                )}
                <td className="col-num">{formatCount(c.batches)}</td>
                <td>{c.state === 'DELETED' ? 'Deleted (garbage collected)' : 'Active'}</td>
                <td className="col-num">{c.resources.length}</td>
                <td className="col-num">{formatBytes(c.resources.reduce((n, r) => n + r.size, 0))}</td>
                <td className="col-num">{formatMetric(c.validation_metric ?? null)}</td>
                <td>{formatDateTime(c.created_at)}</td>
                <td>
                  {c.state !== 'DELETED' && (
                    <span className="row-actions">
                      <DownloadButton
                        path={api.checkpointDownloadPath(c.uuid)}
                        filename={`${c.uuid}.tar.gz`}
                        label="Download"
                        ariaLabel={`Download checkpoint ${c.uuid}`}
                        small
                      />
                      {actions?.(c)}
                    </span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
