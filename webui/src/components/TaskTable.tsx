// Shells or notebooks in a table: id, state with why it waits or how it
// ended, slots, pool, when it was created, its owner (for admins, who see
// everyone's), and the page's actions for each.
import type { ReactNode } from 'react';
import type { Shell } from '../api/types';
import { formatDateTime } from '../lib/format';
import { taskDetail, type TaskNoun } from '../lib/tasks';
import { StateBadge } from './StateBadge';

export function TaskTable<T extends Shell>({
  tasks,
  noun,
  showOwner,
  actions,
}: {
  tasks: T[];
  noun: TaskNoun;
  showOwner: boolean;
  actions: (task: T) => ReactNode;
}) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={`${noun[0].toUpperCase()}${noun.slice(1)}s`}>
      <table className="table">
        <thead>
          <tr>
            <th scope="col" className="col-num">
              ID
            </th>
            <th scope="col">State</th>
            <th scope="col" className="col-num">
              Slots
            </th>
            <th scope="col">Pool</th>
            <th scope="col">Why it waits / how it ended</th>
            <th scope="col">Created</th>
            {showOwner && <th scope="col">Owner</th>}
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {tasks.map((t) => (
            <tr key={t.id} data-task={t.id} data-state={t.state}>
              <td className="col-num">{t.id}</td>
              <td>
                <StateBadge state={t.state} />
              </td>
              <td className="col-num">{t.slots}</td>
              <td>{t.resource_pool}</td>
              <td className="reason">{taskDetail(t)}</td>
              <td title={t.created_at}>{formatDateTime(t.created_at)}</td>
              {showOwner && <td>{t.owner}</td>}
              <td>
                <div className="actions">{actions(t)}</div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
