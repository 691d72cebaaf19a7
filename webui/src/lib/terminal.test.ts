import { describe, expect, it } from 'vitest';
import { connectTerminal, terminalUrl } from './terminal';

// A WebSocket stand-in: records what is sent, lets the test deliver frames.
class FakeSocket extends EventTarget {
  static OPEN = 1;
  readyState = 0;
  binaryType = 'blob';
  sent: (string | Uint8Array)[] = [];
  closedWith: number | null = null;
  constructor(public url: string) {
    super();
  }
  send(frame: string | Uint8Array) {
    this.sent.push(frame);
  }
  close(code: number) {
    this.closedWith = code;
  }
  open() {
    this.readyState = 1;
    this.dispatchEvent(new Event('open'));
  }
  deliver(data: string | ArrayBuffer) {
    this.dispatchEvent(new MessageEvent('message', { data }));
  }
  end(reason = '') {
    this.dispatchEvent(new CloseEvent('close', { reason }));
  }
}

describe('terminal', () => {
  it('builds the WebSocket URL of this origin with the ticket and the size', () => {
    expect(terminalUrl('https://ring.example.org', '/api/v1/shells/4/terminal', 't1', 30, 100)).toBe(
      'wss://ring.example.org/api/v1/shells/4/terminal?ticket=t1&rows=30&cols=100',
    );
    expect(terminalUrl('http://127.0.0.1:8080', '/api/v1/shells/4/terminal', 'a b', 24, 80)).toBe(
      'ws://127.0.0.1:8080/api/v1/shells/4/terminal?ticket=a+b&rows=24&cols=80',
    );
  });

  it('sends typing as binary and resizes as text, after the socket opens', () => {
    let socket: FakeSocket | null = null;
    const conn = connectTerminal(
      'ws://x/t',
      { onOutput: () => {}, onClosed: () => {} },
      (url) => (socket = new FakeSocket(url)) as unknown as WebSocket,
    );
    conn.send('ls\r');
    conn.resize(40, 120);
    expect(socket!.sent).toEqual([]);
    socket!.open();
    expect(socket!.binaryType).toBe('arraybuffer');
    expect(new TextDecoder().decode(socket!.sent[0] as Uint8Array)).toBe('ls\r');
    expect(JSON.parse(socket!.sent[1] as string)).toEqual({ type: 'resize', rows: 40, cols: 120 });
    conn.send('\x03');
    expect(Array.from(socket!.sent[2] as Uint8Array)).toEqual([3]);
  });

  it('shows output and ends with the master’s reason', () => {
    let socket: FakeSocket | null = null;
    const shown: string[] = [];
    const closed: string[] = [];
    connectTerminal(
      'ws://x/t',
      { onOutput: (b) => shown.push(new TextDecoder().decode(b)), onClosed: (r) => closed.push(r) },
      (url) => (socket = new FakeSocket(url)) as unknown as WebSocket,
    );
    socket!.open();
    socket!.deliver(new TextEncoder().encode('ring$ ').buffer as ArrayBuffer);
    socket!.deliver('{"type":"closed","reason":"the shell exited"}');
    socket!.end();
    socket!.end();
    expect(shown).toEqual(['ring$ ']);
    expect(closed).toEqual(['the shell exited']);
  });

  it('does not report its own close as the session ending', () => {
    let socket: FakeSocket | null = null;
    const closed: string[] = [];
    const conn = connectTerminal(
      'ws://x/t',
      { onOutput: () => {}, onClosed: (r) => closed.push(r) },
      (url) => (socket = new FakeSocket(url)) as unknown as WebSocket,
    );
    conn.close();
    socket!.end();
    expect(socket!.closedWith).toBe(1000);
    expect(closed).toEqual([]);
  });
});
