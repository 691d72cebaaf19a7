// Reads the list of files of a tar.gz in the browser: the model definition
// the master keeps for an experiment is one, and the API sends it whole.
// gunzip() uses the browser's DecompressionStream; listTar() walks the tar
// headers (ustar with its name prefix, GNU long names, pax paths) and
// returns each entry's path, kind and size. Contents are not kept.

export type TarEntryKind = 'file' | 'directory' | 'link' | 'other';

export interface TarEntry {
  path: string;
  kind: TarEntryKind;
  size: number;
}

export async function gunzip(data: ArrayBuffer | Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const stream = new Response(data).body!.pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const decoder = new TextDecoder();

function text(block: Uint8Array, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return decoder.decode(end < 0 ? field : field.subarray(0, end));
}

function octal(block: Uint8Array, start: number, length: number): number {
  const s = text(block, start, length).trim();
  return s ? parseInt(s, 8) : 0;
}

// The `path` record of a pax header ("<len> path=<value>\n" records).
function paxPath(data: Uint8Array): string | null {
  const records = decoder.decode(data);
  for (const line of records.split('\n')) {
    const m = /^\d+ path=(.*)$/.exec(line);
    if (m) return m[1];
  }
  return null;
}

function kindOf(type: string): TarEntryKind {
  if (type === '0' || type === '\0' || type === '' || type === '7') return 'file';
  if (type === '5') return 'directory';
  if (type === '1' || type === '2') return 'link';
  return 'other';
}

// The entries of an uncompressed tar archive, in archive order; throws on a
// header whose checksum is wrong (not a tar, or cut short).
export function listTar(tar: Uint8Array): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  let longName: string | null = null;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break; // the end-of-archive blocks
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : header[i];
    if (sum !== octal(header, 148, 8)) throw new Error(`not a tar archive (bad header at byte ${offset})`);
    const size = octal(header, 124, 12);
    const type = String.fromCharCode(header[156]);
    const dataStart = offset + 512;
    offset = dataStart + Math.ceil(size / 512) * 512;
    if (type === 'L' || type === 'x') {
      const data = tar.subarray(dataStart, dataStart + size);
      longName = type === 'L' ? text(data, 0, size) : (paxPath(data) ?? longName);
      continue;
    }
    if (type === 'g') continue; // global pax header
    const magic = text(header, 257, 6);
    const prefix = magic.startsWith('ustar') ? text(header, 345, 155) : '';
    const name = text(header, 0, 100);
    let path = longName ?? (prefix ? `${prefix}/${name}` : name);
    longName = null;
    path = path.replace(/^\.\//, '');
    if (path === '' || path === '.' || path === './') continue;
    entries.push({ path: path.replace(/\/$/, ''), kind: kindOf(type), size });
  }
  return entries;
}
