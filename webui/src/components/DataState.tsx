// What a section shows before its data is there, when loading failed, or
// when there is nothing to show.
import type { ReactNode } from 'react';

export function Loading({ what }: { what: string }) {
  return (
    <div className="state-box" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </div>
  );
}

export function ErrorMessage({ error, onRetry, what }: { error: Error | null; onRetry?: () => void; what: string }) {
  return (
    <div className="state-box state-error" role="alert">
      <strong>Could not load {what}.</strong> {error?.message}
      {onRetry && (
        <button type="button" className="btn btn-small" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

// Shown above data that is still displayed while refreshing it fails.
export function StaleNotice({ error }: { error: Error | null | undefined }) {
  if (!error) return null;
  return (
    <div className="stale" role="status">
      Live updates paused: {error.message}. Retrying…
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state-box state-empty">
      <strong>{title}</strong>
      {children && <div className="state-detail">{children}</div>}
    </div>
  );
}
