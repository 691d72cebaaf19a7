// One model of the registry and its versions: each version's checkpoint
// (downloadable while it is on disk), the experiment and trial it came from,
// its metadata and notes; the model's owner or an admin edits the notes.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Model, ModelVersion } from '../api/types';
import { useSession } from '../auth/session';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { DownloadButton } from '../components/DownloadButton';
import { mayChange } from '../lib/experiments';
import { formatCount, formatDateTime, formatValue } from '../lib/format';
import { paths } from '../paths';

export function ModelPage({ name }: { name: string }) {
  const data = useQuery(queries.modelVersions(name));
  const { session } = useSession();
  useEffect(() => {
    document.title = `Model ${name} · Ringmaster`;
  }, [name]);

  const crumbs = (
    <p className="crumbs">
      <Link to={paths.models()}>Models</Link> / {name}
    </p>
  );
  if (data.isPending) return <Loading what={`model ${name}`} />;
  if (!data.data)
    return (
      <section>
        {crumbs}
        <ErrorMessage what={`model ${name}`} error={data.error} onRetry={() => void data.refetch()} />
      </section>
    );
  const { model, versions } = data.data;
  const mine = mayChange(session, model);
  return (
    <section aria-labelledby="model-title">
      {crumbs}
      <div className="page-head">
        <div>
          <h1 id="model-title">{model.name}</h1>
          {model.archived && (
            <div className="head-line">
              <span className="chip chip-muted">archived</span>
            </div>
          )}
        </div>
      </div>
      <StaleNotice error={data.error} />
      {model.description && <p className="description">{model.description}</p>}
      <ModelFacts model={model} />
      <section className="panel" aria-labelledby="versions-title">
        <h2 id="versions-title">Versions</h2>
        {versions.length === 0 ? (
          <Empty title="No versions yet.">
            Register a checkpoint from an experiment's or a trial's page as this model's first version.
          </Empty>
        ) : (
          <VersionsTable versions={versions} mayEdit={mine} />
        )}
      </section>
    </section>
  );
}

function ModelFacts({ model }: { model: Model }) {
  return (
    <dl className="facts">
      <div>
        <dt>Owner</dt>
        <dd>{model.owner}</dd>
      </div>
      <div>
        <dt>Versions</dt>
        <dd>{model.num_versions}</dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd>{formatDateTime(model.created_at)}</dd>
      </div>
      <div>
        <dt>Updated</dt>
        <dd>{formatDateTime(model.updated_at)}</dd>
      </div>
      {model.labels.length > 0 && (
        <div>
          <dt>Labels</dt>
          <dd>
            {model.labels.map((l) => (
              <span key={l} className="chip">
                {l}
              </span>
            ))}
          </dd>
        </div>
      )}
    </dl>
  );
}

// A version's metadata as `key: value` pairs, in the order it was given.
export function metadataText(metadata: ModelVersion['metadata']): string {
  const entries = Object.entries(metadata ?? {});
  if (entries.length === 0) return '—';
  return entries
    .map(([k, v]) => `${k}: ${typeof v === 'object' && v !== null ? JSON.stringify(v) : formatValue(v)}`)
    .join(', ');
}

function VersionsTable({ versions, mayEdit }: { versions: ModelVersion[]; mayEdit: boolean }) {
  const [editing, setEditing] = useState<ModelVersion | null>(null);
  return (
    <>
      <div className="table-wrap" tabIndex={0} role="region" aria-label="Versions table">
        <table className="table">
          <thead>
            <tr>
              <th scope="col" className="col-num">
                Version
              </th>
              <th scope="col">Name</th>
              <th scope="col">Checkpoint</th>
              <th scope="col">From</th>
              <th scope="col">Metadata</th>
              <th scope="col">Notes</th>
              <th scope="col">Registered</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {[...versions].reverse().map((v) => (
              <tr key={v.version} data-version={v.version}>
                <td className="col-num">{v.version}</td>
                <td>{v.name || '—'}</td>
                <td>
                  <code title={v.checkpoint_uuid}>{v.checkpoint_uuid.slice(0, 8)}</code>
                  {v.checkpoint && (
                    <span className="muted small">
                      {' '}
                      at {formatCount(v.checkpoint.batches)} batches
                      {v.checkpoint.state === 'DELETED' ? ' (deleted)' : ''}
                    </span>
                  )}
                </td>
                <td>
                  {v.checkpoint ? (
                    <>
                      <Link to={paths.trial(v.checkpoint.trial_id)}>trial {v.checkpoint.trial_id}</Link>
                      {v.checkpoint.experiment_id !== null && (
                        <>
                          {' '}
                          of{' '}
                          <Link to={paths.experiment(v.checkpoint.experiment_id)}>
                            experiment {v.checkpoint.experiment_id}
                          </Link>
                        </>
                      )}
                    </>
                  ) : (
                    '—'
                  )}
                </td>
                <td className="small">{metadataText(v.metadata)}</td>
                <td className="notes">{v.notes || '—'}</td>
                <td>
                  {v.created_by}, {formatDateTime(v.created_at)}
                </td>
                <td>
                  <span className="row-actions">
                    {v.checkpoint?.state !== 'DELETED' && (
                      <DownloadButton
                        path={api.checkpointDownloadPath(v.checkpoint_uuid)}
                        filename={`${v.model}-v${v.version}.tar.gz`}
                        label="Download"
                        ariaLabel={`Download version ${v.version} of ${v.model}`}
                        small
                      />
                    )}
                    {mayEdit && (
                      <button
                        type="button"
                        className="btn btn-small"
                        aria-label={`Edit notes of version ${v.version}`}
                        onClick={() => setEditing(v)}
                      >
                        Edit notes
                      </button>
                    )}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {editing && <EditNotes version={editing} onClose={() => setEditing(null)} />}
    </>
  );
}

function EditNotes({ version, onClose }: { version: ModelVersion; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [notes, setNotes] = useState(version.notes);
  const save = useMutation({
    mutationFn: () => api.changeVersion(version.model, version.version, { notes }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: keys.modelVersions(version.model) });
      onClose();
    },
  });
  return (
    <ConfirmDialog
      title={`Notes of version ${version.version} of ${version.model}`}
      confirmLabel="Save notes"
      form
      busy={save.isPending}
      error={save.error ? failureText(save.error) : null}
      onConfirm={() => save.mutate()}
      onCancel={onClose}
    >
      <label className="field">
        Notes
        <textarea value={notes} rows={6} maxLength={65536} onChange={(e) => setNotes(e.target.value)} />
      </label>
    </ConfirmDialog>
  );
}
