// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { archive, entry, gzip, header } from '../test/tarball';
import { gunzip, listTar } from './tar';

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
    expect(listTar(await gunzip(await gzip(tar)))).toEqual([{ path: 'a.txt', kind: 'file', size: 5 }]);
  });
});
