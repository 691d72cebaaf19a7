// Every experiment in one table: filter by state, owner, label, name,
// workspace and project,
// sort by any column, page, and act on one (with confirmation) or on the
// selected rows at once (BulkActions). The view lives in the URL; the list
// is one conditional request every few seconds, however many experiments are
// on screen.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { keys, queries } from '../api/queries';
import { BulkActions } from '../components/BulkActions';
import { BestMetric } from '../components/BestMetric';
import { Empty, ErrorMessage, Loading, StaleNotice } from '../components/DataState';
import { ExperimentActions } from '../components/ExperimentActions';
import { Pager } from '../components/Pager';
import { PlaceFilter } from '../components/PlaceFilter';
import { ProgressBar } from '../components/ProgressBar';
import { SortHeader } from '../components/SortHeader';
import { StateBadge } from '../components/StateBadge';
import { useNow } from '../hooks/useNow';
import {
  ACTIONS,
  ARCHIVED_FILTERS,
  DEFAULT_LIST_QUERY,
  STATE_FILTERS,
  listQueryToParams,
  listQueryToSearch,
  parseListQuery,
  toggleSort,
  type ArchivedFilter,
  type ListQuery,
  type SortKey,
} from '../lib/experiments';
import { durationBetween, formatAgo, formatDateTime } from '../lib/format';
import { placeText } from '../lib/workspaces';
import { Link, useLocation, useNavigate } from 'react-router';
import { paths } from '../paths';

export function ExperimentsPage() {
  const { search } = useLocation();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const q = useMemo(() => parseListQuery(search), [search]);
  const [nameInput, setNameInput] = useState(q.name);
  const [notice, setNotice] = useState<string | null>(null);
  const now = useNow();

  useEffect(() => {
    document.title = 'Experiments · Ringmaster';
  }, []);
  useEffect(() => setNameInput(q.name), [q.name]);

  const update = (next: Partial<ListQuery>, resetPage = true) =>
    navigate(paths.experiments(listQueryToSearch({ ...q, ...next, ...(resetPage ? { page: 1 } : {}) })), {
      replace: true,
    });

  // Typing in the name filter updates the view after a short pause.
  useEffect(() => {
    if (nameInput === q.name) return;
    const t = setTimeout(() => update({ name: nameInput }), 300);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [nameInput]);

  const params = listQueryToParams(q);
  const list = useQuery(queries.experimentList(params));
  const data = list.data;
  const changed = () => void queryClient.invalidateQueries({ queryKey: keys.experiments });
  const shownIds = data?.experiments.map((e) => e.id) ?? [];
  // The selection is of rows on screen: a row that left the view leaves it.
  const chosen = shownIds.filter((id) => selected.has(id));
  const toggle = (id: number, on: boolean) =>
    setSelected((s) => {
      const next = new Set(s);
      if (on) next.add(id);
      else next.delete(id);
      return next;
    });
  const filtered = q.state || q.owner || q.label || q.name || q.archived === 'only' || q.workspace || q.project;

  const sortProps = (key: SortKey) => ({
    active: q.sort === key,
    order: q.order,
    onSort: () => navigate(paths.experiments(listQueryToSearch(toggleSort(q, key))), { replace: true }),
  });

  return (
    <section aria-labelledby="experiments-title">
      <div className="page-head">
        <h1 id="experiments-title">Experiments</h1>
      </div>
      <form className="toolbar" role="search" aria-label="Filter experiments" onSubmit={(e) => e.preventDefault()}>
        <label className="inline-field grow">
          Name
          <input
            type="search"
            value={nameInput}
            placeholder="Filter by name"
            onChange={(e) => setNameInput(e.target.value)}
          />
        </label>
        <label className="inline-field">
          State
          <select value={q.state} onChange={(e) => update({ state: e.target.value as ListQuery['state'] })}>
            {STATE_FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          Owner
          <select value={q.owner} onChange={(e) => update({ owner: e.target.value })}>
            <option value="">Anyone</option>
            {(data?.facets.owners ?? (q.owner ? [q.owner] : [])).map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          Label
          <select value={q.label} onChange={(e) => update({ label: e.target.value })}>
            <option value="">Any label</option>
            {(data?.facets.labels ?? (q.label ? [q.label] : [])).map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          Archived
          <select value={q.archived} onChange={(e) => update({ archived: e.target.value as ArchivedFilter })}>
            {ARCHIVED_FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <PlaceFilter workspace={q.workspace} project={q.project} onChange={update} />
        {filtered && (
          <button
            type="button"
            className="btn btn-small"
            onClick={() =>
              navigate(paths.experiments(listQueryToSearch({ ...DEFAULT_LIST_QUERY, sort: q.sort, order: q.order })), {
                replace: true,
              })
            }
          >
            Clear filters
          </button>
        )}
      </form>
      {notice && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
      {list.isPending && <Loading what="experiments" />}
      {!data && list.error && (
        <ErrorMessage what="experiments" error={list.error} onRetry={() => void list.refetch()} />
      )}
      {data && (
        <>
          <StaleNotice error={list.error} />
          <BulkActions
            experiments={data.experiments.filter((e) => selected.has(e.id))}
            onDone={(message) => {
              setNotice(message);
              setSelected(new Set());
              changed();
            }}
          />
          {data.experiments.length === 0 ? (
            filtered ? (
              <Empty title="No experiment matches these filters." />
            ) : (
              <Empty title="No experiments yet.">
                Submit one with{' '}
                <code>ring experiment create configs/experiments/quadratic.yaml build/examples/quadratic/model</code>.
              </Empty>
            )
          ) : (
            <div className="table-wrap" tabIndex={0} role="region" aria-label="Experiments table">
              <table className="table" aria-labelledby="experiments-title">
                <thead>
                  <tr>
                    <th scope="col" className="col-select">
                      <input
                        type="checkbox"
                        aria-label="Select every experiment on this page"
                        checked={shownIds.length > 0 && chosen.length === shownIds.length}
                        onChange={(ev) => setSelected(ev.target.checked ? new Set(shownIds) : new Set())}
                      />
                    </th>
                    <SortHeader label="ID" {...sortProps('id')} className="col-num" />
                    <SortHeader label="Name" {...sortProps('name')} />
                    <SortHeader label="Owner" {...sortProps('owner')} />
                    <SortHeader label="State" {...sortProps('state')} />
                    <SortHeader label="Progress" {...sortProps('progress')} />
                    <SortHeader label="Best validation" {...sortProps('best_validation')} />
                    <SortHeader label="Trials" {...sortProps('num_trials')} className="col-num" />
                    <SortHeader label="Started" {...sortProps('created_at')} />
                    <th scope="col">Duration</th>
                    <th scope="col">Project</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.experiments.map((e) => (
                    <tr key={e.id} data-experiment={e.id} className={selected.has(e.id) ? 'row-selected' : undefined}>
                      <td className="col-select">
                        <input
                          type="checkbox"
                          aria-label={`Select experiment ${e.id}`}
                          checked={selected.has(e.id)}
                          onChange={(ev) => toggle(e.id, ev.target.checked)}
                        />
                      </td>
                      <td className="col-num">{e.id}</td>
                      <td>
                        <Link to={paths.experiment(e.id)} className="strong">
                          {e.name}
                        </Link>
                        {e.archived && <span className="chip chip-muted">archived</span>}
                        {e.labels?.map((l) => (
                          <span key={l} className="chip">
                            {l}
                          </span>
                        ))}
                      </td>
                      <td>{e.owner}</td>
                      <td>
                        <StateBadge state={e.state} />
                      </td>
                      <td>
                        <ProgressBar value={e.progress} label={`Progress of experiment ${e.id}`} />
                      </td>
                      <td>
                        <BestMetric e={e} />
                      </td>
                      <td className="col-num">{e.num_trials}</td>
                      <td title={formatDateTime(e.created_at)}>{formatAgo(e.created_at, now)}</td>
                      <td>{durationBetween(e.created_at, e.ended_at, now)}</td>
                      <td>
                        {e.project_id ? (
                          <Link
                            to={paths.experiments(
                              listQueryToSearch({
                                ...q,
                                workspace: e.workspace_id ?? 0,
                                project: e.project_id,
                                page: 1,
                              }),
                            )}
                            title="Only the experiments of this project"
                          >
                            {placeText(e.workspace, e.project)}
                          </Link>
                        ) : null}
                      </td>
                      <td>
                        <ExperimentActions
                          experiment={e}
                          compact
                          onDone={(updated, action) => {
                            setNotice(
                              `${ACTIONS[action].label}: experiment ${updated.id} is now ${updated.state.toLowerCase()}.`,
                            );
                          }}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {data.total > 0 && (
            <Pager
              what="experiments"
              page={q.page}
              pageSize={q.pageSize}
              total={data.total}
              onPage={(page) => update({ page }, false)}
              onPageSize={(pageSize) => update({ pageSize })}
            />
          )}
        </>
      )}
    </section>
  );
}
