import { formatPercent } from '../lib/format';

export function ProgressBar({ value, label }: { value: number; label: string }) {
  const v = Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
  return (
    <div
      className="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(v * 100)}
    >
      <div className="progress-fill" style={{ width: `${v * 100}%` }} />
      <span className="progress-text">{formatPercent(v)}</span>
    </div>
  );
}
