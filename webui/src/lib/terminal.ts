// The web UI's side of a task's terminal (docs/interactive.md "Shells"):
// the master relays it over a WebSocket to the agent whose rank runs the
// shell. What is typed goes out as binary frames, what the shell shows
// comes back as binary frames, a resize goes out as the text frame
// {"type": "resize", rows, cols}, and the master's text frame
// {"type": "closed", reason} ends the session. A browser cannot put its
// bearer token on a WebSocket, so it opens one with a one-time ticket.

export interface TerminalHandlers {
  onOutput(bytes: Uint8Array): void;
  onClosed(reason: string): void;
}

export interface TerminalConnection {
  send(typed: string): void;
  resize(rows: number, cols: number): void;
  close(): void;
}

// ws(s)://<this origin><path>?ticket=..&rows=..&cols=..
export function terminalUrl(origin: string, path: string, ticket: string, rows: number, cols: number): string {
  const url = new URL(path, origin);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('ticket', ticket);
  url.searchParams.set('rows', String(rows));
  url.searchParams.set('cols', String(cols));
  return url.toString();
}

type SocketFactory = (url: string) => WebSocket;

export function connectTerminal(
  url: string,
  handlers: TerminalHandlers,
  open: SocketFactory = (u) => new WebSocket(u),
): TerminalConnection {
  const socket = open(url);
  socket.binaryType = 'arraybuffer';
  const encoder = new TextEncoder();
  let reason = '';
  let ended = false;
  const pending: (string | Uint8Array)[] = [];
  const flush = () => {
    while (pending.length > 0 && socket.readyState === WebSocket.OPEN) socket.send(pending.shift()!);
  };
  const queue = (frame: string | Uint8Array) => {
    pending.push(frame);
    flush();
  };
  socket.addEventListener('open', flush);
  socket.addEventListener('message', (event: MessageEvent) => {
    if (typeof event.data === 'string') {
      try {
        const control = JSON.parse(event.data) as { type?: string; reason?: string };
        if (control.type === 'closed') reason = control.reason ?? 'the session ended';
      } catch {
        // not a control frame: nothing to do
      }
      return;
    }
    handlers.onOutput(new Uint8Array(event.data as ArrayBuffer));
  });
  socket.addEventListener('close', (event: CloseEvent) => {
    if (ended) return;
    ended = true;
    handlers.onClosed(reason || event.reason || 'the connection closed');
  });
  return {
    send: (typed) => queue(encoder.encode(typed)),
    resize: (rows, cols) => queue(JSON.stringify({ type: 'resize', rows, cols })),
    close: () => {
      ended = true;
      socket.close(1000);
    },
  };
}
