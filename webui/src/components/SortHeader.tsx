// A sortable column header: a button inside the <th>, with aria-sort on it.
import type { ReactNode } from 'react';

export function SortHeader({
  label,
  active,
  order,
  onSort,
  className,
}: {
  label: ReactNode;
  active: boolean;
  order: 'asc' | 'desc';
  onSort: () => void;
  className?: string;
}) {
  return (
    <th scope="col" className={className} aria-sort={active ? (order === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" className="sort-button" onClick={onSort}>
        {label}
        <span className="sort-mark" aria-hidden="true">
          {active ? (order === 'asc' ? '▲' : '▼') : '↕'}
        </span>
      </button>
    </th>
  );
}
