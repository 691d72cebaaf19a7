// The files of an experiment's model definition, listed in the browser from
// the tar.gz the master sends (lib/tar.ts), with a link to download it.
import { useQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import { queries } from '../api/queries';
import { formatBytes } from '../lib/format';
import { ErrorMessage, Loading } from './DataState';
import { DownloadButton } from './DownloadButton';

export function ModelFiles({ experimentId }: { experimentId: number }) {
  const files = useQuery(queries.modelFiles(experimentId));
  const list = files.data?.filter((f) => f.kind !== 'directory');
  const total = list?.reduce((n, f) => n + f.size, 0) ?? 0;
  return (
    <section className="panel" aria-labelledby="model-title">
      <div className="panel-head">
        <h2 id="model-title">Model definition</h2>
        <DownloadButton
          path={api.modelDefinitionPath(experimentId)}
          filename={`experiment_${experimentId}_model_def.tar.gz`}
          label="Download model"
          ariaLabel={`Download model of experiment ${experimentId}`}
          small
        />
      </div>
      {files.isPending && <Loading what="the model's files" />}
      {files.error && (
        <ErrorMessage what="the model's files" error={files.error} onRetry={() => void files.refetch()} />
      )}
      {list && (
        <>
          <p className="muted small">
            {list.length} {list.length === 1 ? 'file' : 'files'}, {formatBytes(total)}
          </p>
          <div className="table-wrap" tabIndex={0} role="region" aria-label="Model files">
            <table className="table table-compact">
              <thead>
                <tr>
                  <th scope="col">File</th>
                  <th scope="col" className="col-num">
                    Size
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((f) => (
                  <tr key={f.path} data-file={f.path}>
                    <td>
                      <code>{f.path}</code>
                      {f.kind === 'link' && <span className="muted"> (link)</span>}
                    </td>
                    <td className="col-num">{formatBytes(f.size)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
