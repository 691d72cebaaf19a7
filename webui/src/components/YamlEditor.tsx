// A YAML editor (CodeMirror 6 with @codemirror/lang-yaml) whose `marks` (the
// master's config problems, lib/configIssues.ts) are drawn on their lines:
// underlined, with a marker in the gutter and the message on hover or with
// Ctrl-Shift-M. Loaded only with the fork page (a chunk of its own). The
// editor owns its text while mounted; `onChange` reports every edit.
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { yaml } from '@codemirror/lang-yaml';
import { defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { lintGutter, lintKeymap, setDiagnostics } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { EditorView, highlightActiveLine, keymap, lineNumbers } from '@codemirror/view';
import { useEffect, useRef } from 'react';
import type { IssueMark } from '../lib/configIssues';

export interface YamlEditorProps {
  value: string;
  onChange: (text: string) => void;
  marks: IssueMark[];
  label: string;
}

export function YamlEditor({ value, onChange, marks, label }: YamlEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const changed = useRef(onChange);
  changed.current = onChange;

  useEffect(() => {
    const v = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          history(),
          highlightActiveLine(),
          syntaxHighlighting(defaultHighlightStyle),
          yaml(),
          lintGutter(),
          // Long lines wrap: the editor never scrolls sideways (and grows
          // with its text, so it has no scrolling region of its own).
          EditorView.lineWrapping,
          keymap.of([...defaultKeymap, ...historyKeymap, ...lintKeymap, indentWithTab]),
          EditorView.contentAttributes.of({ 'aria-label': label, 'aria-multiline': 'true' }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) changed.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // The editor is made once; `value` is its first text.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const length = v.state.doc.length;
    const diagnostics = marks
      .filter((m) => m.to <= length)
      .map((m) => ({ from: m.from, to: m.to, severity: m.severity, message: m.message }));
    v.dispatch(setDiagnostics(v.state, diagnostics));
  }, [marks]);

  return <div className="yaml-editor" ref={host} />;
}
