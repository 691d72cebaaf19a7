// The pools bound to a workspace: its members may submit there, and the
// default one takes their experiments whose config names no pool. Its ADMINs
// and cluster admins bind a pool of master.yaml (one kept for named users:
// cluster admins only, the master says so), make one the default, unbind.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, failureText } from '../api/client';
import { keys, queries } from '../api/queries';
import type { Workspace } from '../api/types';
import { ConfirmButton } from './ConfirmButton';

export function WorkspacePools({ workspace: ws, manage }: { workspace: Workspace; manage: boolean }) {
  const queryClient = useQueryClient();
  const changed = (w: Workspace) => {
    queryClient.setQueryData(keys.workspace(ws.id), w);
    void queryClient.invalidateQueries({ queryKey: keys.workspaces });
  };
  const makeDefault = useMutation({
    mutationFn: (pool: string) => api.bindPool(ws.id, pool, true),
    onSuccess: changed,
  });
  return (
    <>
      {!manage && <p className="muted small">Only an ADMIN of this workspace or a cluster admin binds its pools.</p>}
      {ws.pools.length === 0 ? (
        <p className="muted small">No pools are bound: its members submit to the pools open to them.</p>
      ) : (
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Pools table">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Pool</th>
                <th scope="col">Default</th>
                {manage && (
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {ws.pools.map((p) => (
                <tr key={p.pool} data-pool-binding={p.pool}>
                  <td>{p.pool}</td>
                  <td>{p.default ? 'yes' : ''}</td>
                  {manage && (
                    <td>
                      <div className="row-actions">
                        {!p.default && (
                          <button
                            type="button"
                            className="btn btn-small"
                            aria-label={`Make ${p.pool} the default pool`}
                            disabled={makeDefault.isPending}
                            onClick={() => makeDefault.mutate(p.pool)}
                          >
                            Make default
                          </button>
                        )}
                        <ConfirmButton
                          small
                          danger
                          label="Unbind"
                          name={`Unbind pool ${p.pool}`}
                          title={`Unbind pool ${p.pool} from ${ws.name}?`}
                          run={() => api.unbindPool(ws.id, p.pool)}
                          onDone={changed}
                        >
                          <p>
                            Its members submit there only if the pool is open to them; experiments already there stay.
                          </p>
                        </ConfirmButton>
                      </div>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {makeDefault.error && (
        <p className="form-error" role="alert">
          {failureText(makeDefault.error)}
        </p>
      )}
      {manage && (
        <>
          <h3>Bind a pool</h3>
          <BindPoolForm workspace={ws} onBound={changed} />
        </>
      )}
    </>
  );
}

function BindPoolForm({ workspace: ws, onBound }: { workspace: Workspace; onBound: (w: Workspace) => void }) {
  const pools = useQuery({ ...queries.pools(), refetchInterval: false, staleTime: 30000 });
  const bound = new Set(ws.pools.map((p) => p.pool));
  const choices = (pools.data?.pools ?? []).filter((p) => p.configured && !bound.has(p.name));
  const [pool, setPool] = useState('');
  const [isDefault, setIsDefault] = useState(false);
  const chosen = choices.some((p) => p.name === pool) ? pool : (choices[0]?.name ?? '');
  const bind = useMutation({
    mutationFn: () => api.bindPool(ws.id, chosen, isDefault),
    onSuccess: (w) => {
      onBound(w);
      setPool('');
      setIsDefault(false);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (chosen) bind.mutate();
  };
  if (pools.data && choices.length === 0)
    return <p className="muted small">Every pool of master.yaml is bound to this workspace.</p>;
  return (
    <form className="inline-form" aria-label="Bind a pool" onSubmit={submit}>
      <label className="field">
        Pool
        <select value={chosen} onChange={(e) => setPool(e.target.value)} disabled={choices.length === 0}>
          {choices.length === 0 && <option value="">Loading pools…</option>}
          {choices.map((p) => (
            <option key={p.name} value={p.name}>
              {p.name}
              {p.description ? ` (${p.description})` : ''}
            </option>
          ))}
        </select>
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={isDefault} onChange={(e) => setIsDefault(e.target.checked)} /> Default pool of
        the workspace
      </label>
      <div className="actions">
        <button type="submit" className="btn btn-primary" disabled={bind.isPending || !chosen}>
          {bind.isPending ? 'Binding…' : 'Bind pool'}
        </button>
      </div>
      {(bind.error || pools.error) && (
        <p className="form-error" role="alert">
          {failureText(bind.error ?? pools.error)}
        </p>
      )}
    </form>
  );
}
