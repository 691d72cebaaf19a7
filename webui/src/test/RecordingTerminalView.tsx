// TerminalView for component tests (jsdom has no canvas for xterm.js): it
// shows what it was given, so a test sees which terminal and ticket a page
// opened.
export function TerminalView({ path, ticket }: { path: string; ticket: string }) {
  return (
    <div data-testid="terminal" data-path={path} data-ticket={ticket}>
      terminal {path} with ticket {ticket}
    </div>
  );
}
