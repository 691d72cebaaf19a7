// Stands in for the CodeMirror editor in component tests (jsdom lays out no
// text): a textarea with the same props, and the marks it was given drawn as
// a list, so a test reads what would be underlined on which line.
import type { YamlEditorProps } from '../components/YamlEditor';

export function YamlEditor({ value, onChange, marks, label }: YamlEditorProps) {
  return (
    <div>
      <textarea aria-label={label} defaultValue={value} onChange={(e) => onChange(e.target.value)} />
      <ul aria-label="Editor marks">
        {marks.map((m, i) => (
          <li key={i} data-line={m.line} data-severity={m.severity}>
            {m.message}
          </li>
        ))}
      </ul>
    </div>
  );
}
