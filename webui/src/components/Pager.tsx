import { formatCount } from '../lib/format';
import { PAGE_SIZES } from '../lib/experiments';

export function Pager({
  page,
  pageSize,
  total,
  onPage,
  onPageSize,
  what,
}: {
  page: number;
  pageSize: number;
  total: number;
  onPage: (page: number) => void;
  onPageSize: (size: number) => void;
  what: string;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const first = total === 0 ? 0 : (page - 1) * pageSize + 1;
  const last = Math.min(total, page * pageSize);
  return (
    <nav className="pager" aria-label={`Pages of ${what}`}>
      <span aria-live="polite">
        {formatCount(first)}–{formatCount(last)} of {formatCount(total)}
      </span>
      <button type="button" className="btn btn-small" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        ‹ Previous
      </button>
      <span>
        Page {page} of {pages}
      </span>
      <button type="button" className="btn btn-small" onClick={() => onPage(page + 1)} disabled={page >= pages}>
        Next ›
      </button>
      <label className="inline-field">
        Per page
        <select value={pageSize} onChange={(e) => onPageSize(Number(e.target.value))}>
          {PAGE_SIZES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}
