// A task's terminal in the browser (xterm.js), attached to its shell
// through lib/terminal.ts: it fills its box, follows its size, and says
// when the session ended. Leaving the page detaches; the shell runs on.
import { useEffect, useRef, useState } from 'react';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { connectTerminal, terminalUrl } from '../lib/terminal';

export function TerminalView({ path, ticket }: { path: string; ticket: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [ended, setEnded] = useState<string | null>(null);
  useEffect(() => {
    if (!box.current) return;
    const term = new Terminal({ cursorBlink: true, convertEol: false, scrollback: 5000 });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(box.current);
    fit.fit();
    const conn = connectTerminal(terminalUrl(window.location.origin, path, ticket, term.rows, term.cols), {
      onOutput: (bytes) => term.write(bytes),
      onClosed: (reason) => setEnded(reason),
    });
    const typing = term.onData((data) => conn.send(data));
    const sizing = term.onResize(({ rows, cols }) => conn.resize(rows, cols));
    const observer = new ResizeObserver(() => fit.fit());
    observer.observe(box.current);
    term.focus();
    return () => {
      observer.disconnect();
      typing.dispose();
      sizing.dispose();
      conn.close();
      term.dispose();
    };
  }, [path, ticket]);
  return (
    <div className="terminal">
      <div ref={box} className="terminal-screen" data-testid="terminal" />
      {ended && (
        <p role="status" className="terminal-ended">
          The session ended: {ended}.
        </p>
      )}
    </div>
  );
}
