// A labelled text input whose error (the master's refusal of this field,
// lib/workspaces.ts messageAt) shows under it and marks it invalid.
import { useId } from 'react';

export function TextField({
  label,
  value,
  onChange,
  error,
  required,
  maxLength,
  grow,
  placeholder,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string | null;
  required?: boolean;
  maxLength?: number;
  grow?: boolean;
  placeholder?: string;
}) {
  const id = useId();
  return (
    <div className={grow ? 'field grow' : 'field'}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        required={required}
        maxLength={maxLength}
        placeholder={placeholder}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
      />
      {error && (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
