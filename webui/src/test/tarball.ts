// Tar archives built by hand, for tests of what reads them (lib/tar.ts).
// A tar header block for `name` (ustar), with its checksum.
export function header(name: string, size: number, type: string, prefix = ''): Uint8Array {
  const h = new Uint8Array(512);
  const put = (at: number, s: string) => h.set(new TextEncoder().encode(s), at);
  put(0, name);
  put(100, '0000644\0');
  put(124, size.toString(8).padStart(11, '0') + '\0');
  put(156, type);
  put(257, 'ustar\0');
  put(263, '00');
  put(345, prefix);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : h[i];
  put(148, sum.toString(8).padStart(6, '0') + '\0 ');
  return h;
}

export function entry(name: string, body: string, type = '0', prefix = ''): Uint8Array[] {
  const data = new TextEncoder().encode(body);
  const padded = new Uint8Array(Math.ceil(data.length / 512) * 512);
  padded.set(data);
  return [header(name, data.length, type, prefix), padded];
}

export function archive(parts: Uint8Array[][]): Uint8Array {
  const blocks = [...parts.flat(), new Uint8Array(1024)];
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

export async function gzip(data: Uint8Array): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Response(data as Uint8Array<ArrayBuffer>).body!.pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
