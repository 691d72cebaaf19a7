// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { gunzip, listTar } from './tar';

// A tar header block for `name` (ustar), with its checksum.
function header(name: string, size: number, type: string, prefix = ''): Uint8Array {
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

function entry(name: string, body: string, type = '0', prefix = ''): Uint8Array[] {
  const data = new TextEncoder().encode(body);
  const padded = new Uint8Array(Math.ceil(data.length / 512) * 512);
  padded.set(data);
  return [header(name, data.length, type, prefix), padded];
}

function archive(parts: Uint8Array[][]): Uint8Array {
  const blocks = [...parts.flat(), new Uint8Array(1024)];
  const out = new Uint8Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

describe('listTar', () => {
  it('lists files, folders, ustar prefixes, GNU long names and pax paths', () => {
    const long = 'deep/'.repeat(30) + 'model.py';
    const tar = archive([
      [header('./', 0, '5')],
      entry('./run.sh', '#!/bin/sh\necho hi\n'),
      [header('lib/', 0, '5')],
      entry('train.py', 'x'.repeat(700), '0', 'lib'),
      entry('././@LongLink', long + '\0', 'L'),
      entry('deep/trunc', 'abc'),
      entry('PaxHeader', `${20 + 'pax/name.txt'.length} path=pax/name.txt\n`, 'x'),
      entry('pax-short', 'zz'),
    ]);
    expect(listTar(tar)).toEqual([
      { path: 'run.sh', kind: 'file', size: 18 },
      { path: 'lib', kind: 'directory', size: 0 },
      { path: 'lib/train.py', kind: 'file', size: 700 },
      { path: long, kind: 'file', size: 3 },
      { path: 'pax/name.txt', kind: 'file', size: 2 },
    ]);
  });

  it('refuses what is not a tar', () => {
    expect(() => listTar(new TextEncoder().encode('x'.repeat(1024)))).toThrow(/not a tar archive/);
  });

  it('reads a tar.gz through DecompressionStream', async () => {
    const tar = archive([entry('a.txt', 'hello')]);
    const gz = new Response(
      new Response(tar as Uint8Array<ArrayBuffer>).body!.pipeThrough(new CompressionStream('gzip')),
    );
    expect(listTar(await gunzip(new Uint8Array(await gz.arrayBuffer())))).toEqual([
      { path: 'a.txt', kind: 'file', size: 5 },
    ]);
  });
});
