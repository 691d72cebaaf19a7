// A button that downloads a file of the master (a model definition, a
// checkpoint) with the session's token and hands it to the browser to save
// as `filename`. A refusal (403 when experiments are not team-readable, 503
// when the master is busy) is shown next to it.
import { useState } from 'react';
import { api, failureText } from '../api/client';

export function DownloadButton({
  path,
  filename,
  label,
  ariaLabel,
  small,
}: {
  path: string;
  filename: string;
  label: string;
  ariaLabel: string;
  small?: boolean;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const blob = await api.download(path);
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = filename;
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 0);
    } catch (e) {
      setError(failureText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <span className="download">
      <button
        type="button"
        className={`btn ${small ? 'btn-small' : ''}`}
        onClick={run}
        disabled={busy}
        aria-label={ariaLabel}
      >
        {busy ? 'Downloading…' : label}
      </button>
      {error && (
        <span className="form-error small" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
