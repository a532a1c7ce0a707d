// The pure parts of `npm run release` (scripts/release/, scripts/krew/manifest.ts): the krew manifest made from
// plugins/loopguard.yaml, checksums.txt's format, the release URL, and reading a single executable's SEA blob and
// fuse from the bytes of ELF and Mach-O files (small files built here, as postject lays them out).
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { krewManifest } from '../../scripts/krew/manifest.js';
import { checksumsText } from '../../scripts/release/archive.js';
import { PLATFORMS, PROJECT_URL, archiveName, releaseUrl } from '../../scripts/release/platforms.js';
import { SEA_BLOB_MAGIC, inspectSea, seaProblems } from '../../scripts/release/sea-check.js';
import { SEA_FUSE } from '../../scripts/plugin/sea.js';
import { REPO_ROOT } from '../controlplane/crds.js';

const SOURCE = readFileSync(join(REPO_ROOT, 'plugins/loopguard.yaml'), 'utf8');
const HEX = (c: string): string => c.repeat(64);

interface Manifest {
  spec: { version: string; homepage: string; platforms: Array<{ selector: { matchLabels: { os: string; arch: string } }; uri: string; sha256: string; bin: string }> };
}

describe('krew manifest from plugins/loopguard.yaml', () => {
  const archives = PLATFORMS.map((p, i) => ({ os: p.os, arch: p.arch, name: archiveName('v1.2.3', p), sha256: HEX('abcd'[i]!) }));

  it('the source names the four release platforms, each with the files an archive holds', () => {
    const src = parse(SOURCE) as Manifest;
    expect(src.spec.platforms.map((p) => `${p.selector.matchLabels.os}/${p.selector.matchLabels.arch}`)).toEqual(['linux/amd64', 'linux/arm64', 'darwin/amd64', 'darwin/arm64']);
    expect(PLATFORMS.map((p) => `${p.os}/${p.arch}`)).toEqual(['linux/amd64', 'linux/arm64', 'darwin/amd64', 'darwin/arm64']);
  });

  it('fills version, homepage, and per platform the uri and sha256 of its archive', () => {
    const out = parse(krewManifest(SOURCE, { version: 'v1.2.3', homepage: PROJECT_URL, releaseUrl: 'https://h/r/v1.2.3', archives, writtenBy: 'test' })) as Manifest;
    expect(out.spec.version).toBe('v1.2.3');
    expect(out.spec.homepage).toBe('https://github.com/loopguard/loopguard');
    expect(out.spec.platforms.map((p) => [p.selector.matchLabels.os, p.selector.matchLabels.arch, p.uri, p.sha256])).toEqual([
      ['linux', 'amd64', 'https://h/r/v1.2.3/kubectl-loopguard_v1.2.3_linux_amd64.tar.gz', HEX('a')],
      ['linux', 'arm64', 'https://h/r/v1.2.3/kubectl-loopguard_v1.2.3_linux_arm64.tar.gz', HEX('b')],
      ['darwin', 'amd64', 'https://h/r/v1.2.3/kubectl-loopguard_v1.2.3_darwin_amd64.tar.gz', HEX('c')],
      ['darwin', 'arm64', 'https://h/r/v1.2.3/kubectl-loopguard_v1.2.3_darwin_arm64.tar.gz', HEX('d')],
    ]);
    // Nothing of the source's placeholders is left (krew: sha256 must match ^[a-f0-9]{64}$).
    expect(krewManifest(SOURCE, { version: 'v1.2.3', homepage: PROJECT_URL, releaseUrl: 'https://h', archives, writtenBy: 'test' })).not.toContain('set-by');
  });

  it('leaves out the platforms that have no archive', () => {
    const out = parse(krewManifest(SOURCE, { version: 'v1.2.3', homepage: PROJECT_URL, releaseUrl: 'https://h', archives: [archives[0]!], writtenBy: 'test' })) as Manifest;
    expect(out.spec.platforms).toHaveLength(1);
    expect(out.spec.platforms[0]!.selector.matchLabels).toEqual({ os: 'linux', arch: 'amd64' });
  });

  it('refuses an archive of a platform the source does not name', () => {
    expect(() => krewManifest(SOURCE, { version: 'v1', homepage: PROJECT_URL, releaseUrl: 'https://h', archives: [{ os: 'windows', arch: 'amd64', name: 'x', sha256: HEX('a') }], writtenBy: 't' })).toThrow(
      'plugins/loopguard.yaml has no platform for windows/amd64',
    );
  });
});

describe('release names', () => {
  it('the uri folder is the project release page of the version unless overridden', () => {
    expect(releaseUrl('v0.1.0')).toBe('https://github.com/loopguard/loopguard/releases/download/v0.1.0');
    expect(releaseUrl('v0.1.0', 'https://mirror.example/x/')).toBe('https://mirror.example/x');
    expect(releaseUrl('v0.1.0', '')).toBe('https://github.com/loopguard/loopguard/releases/download/v0.1.0');
  });

  it('checksums.txt is sha256sum\'s format, sorted by name', () => {
    expect(checksumsText([{ name: 'b.tgz', sha256: HEX('b') }, { name: 'a.yaml', sha256: HEX('a') }])).toBe(`${HEX('a')}  a.yaml\n${HEX('b')}  b.tgz\n`);
  });
});

/** A blob as Node writes it: the magic, then anything. */
const BLOB = Buffer.concat([Buffer.from([0x20, 0xda, 0x43, 0x01]), Buffer.from('flags and the script')]);

/** A minimal ELF64 with one PT_NOTE segment holding `notes` (name, desc), and the fuse text. */
function elf(machine: number, notes: Array<[string, Buffer]>, fuse: string): Buffer {
  const noteBytes = Buffer.concat(
    notes.map(([name, desc]) => {
      const n = Buffer.from(`${name}\0`);
      const head = Buffer.alloc(12);
      head.writeUInt32LE(n.length, 0);
      head.writeUInt32LE(desc.length, 4);
      const pad = (b: Buffer): Buffer => Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)]);
      return Buffer.concat([head, pad(n), pad(desc)]);
    }),
  );
  const header = Buffer.alloc(64);
  header.writeUInt32LE(0x464c457f, 0);
  header[4] = 2;
  header[5] = 1;
  header.writeUInt16LE(machine, 0x12);
  header.writeBigUInt64LE(64n, 0x20);
  header.writeUInt16LE(56, 0x36);
  header.writeUInt16LE(1, 0x38);
  const ph = Buffer.alloc(56);
  ph.writeUInt32LE(4, 0);
  ph.writeBigUInt64LE(120n, 8);
  ph.writeBigUInt64LE(BigInt(noteBytes.length), 32);
  return Buffer.concat([header, ph, noteBytes, Buffer.from(fuse)]);
}

/** A minimal Mach-O 64 with segment `segname` holding one section `sectname` over `blob`, and optionally LC_CODE_SIGNATURE. */
function macho(cpu: number, segname: string, sectname: string, blob: Buffer, fuse: string, signed: boolean): Buffer {
  const seg = Buffer.alloc(72 + 80);
  seg.writeUInt32LE(0x19, 0);
  seg.writeUInt32LE(seg.length, 4);
  seg.write(segname, 8, 'latin1');
  seg.writeUInt32LE(1, 64);
  seg.write(sectname, 72, 'latin1');
  seg.write(segname, 72 + 16, 'latin1');
  const sig = Buffer.alloc(16);
  sig.writeUInt32LE(0x1d, 0);
  sig.writeUInt32LE(16, 4);
  const cmds = signed ? [seg, sig] : [seg];
  const header = Buffer.alloc(32);
  header.writeUInt32LE(0xfeedfacf, 0);
  header.writeUInt32LE(cpu, 4);
  header.writeUInt32LE(cmds.length, 16);
  const offset = 32 + cmds.reduce((n, c) => n + c.length, 0);
  seg.writeBigUInt64LE(BigInt(blob.length), 72 + 40);
  seg.writeUInt32LE(offset, 72 + 48);
  return Buffer.concat([header, ...cmds, blob, Buffer.from(fuse)]);
}

describe('reading a single executable from its bytes', () => {
  const flipped = `${SEA_FUSE}:1`;

  it('an ELF: the NODE_SEA_BLOB note among others, the flipped fuse', () => {
    const file = elf(183, [['GNU', Buffer.alloc(16, 1)], ['NODE_SEA_BLOB', BLOB]], flipped);
    const got = inspectSea(file);
    expect(got).toEqual({ format: 'elf', arch: 'arm64', blob: BLOB, fuse: 'flipped' });
    expect(seaProblems(got, { format: 'elf', arch: 'arm64', blob: BLOB })).toEqual([]);
    expect(BLOB.readUInt32LE(0)).toBe(SEA_BLOB_MAGIC);
  });

  it('a plain Node ELF: no blob, the fuse unflipped', () => {
    const got = inspectSea(elf(62, [['GNU', Buffer.alloc(4)]], `${SEA_FUSE}:0`));
    expect(got).toEqual({ format: 'elf', arch: 'x64', blob: undefined, fuse: 'unflipped' });
    expect(seaProblems(got, { format: 'elf', arch: 'x64' })).toEqual(['the SEA fuse is unflipped', 'no NODE_SEA_BLOB where Node looks for it']);
  });

  it('a Mach-O: the __NODE_SEA_BLOB section of segment NODE_SEA, and whether a signature is there', () => {
    const got = inspectSea(macho(0x0100000c, 'NODE_SEA', '__NODE_SEA_BLOB', BLOB, flipped, false));
    expect(got).toEqual({ format: 'macho', arch: 'arm64', blob: BLOB, fuse: 'flipped', codeSignature: false });
    expect(seaProblems(got, { format: 'macho', arch: 'arm64', blob: BLOB })).toEqual([]);
    expect(inspectSea(macho(0x01000007, 'NODE_SEA', '__NODE_SEA_BLOB', BLOB, flipped, true))).toMatchObject({ arch: 'x64', codeSignature: true });
  });

  it('finds no blob in another segment, and tells each mismatch', () => {
    const got = inspectSea(macho(0x01000007, '__DATA', '__NODE_SEA_BLOB', BLOB, flipped, false));
    expect(got.blob).toBeUndefined();
    expect(seaProblems(got, { format: 'macho', arch: 'arm64' })).toEqual(['a macho/x64 file, expected macho/arm64', 'no NODE_SEA_BLOB where Node looks for it']);
    const wrong = inspectSea(macho(0x01000007, 'NODE_SEA', '__NODE_SEA_BLOB', Buffer.from('not a blob'), flipped, false));
    expect(seaProblems(wrong, { format: 'macho', arch: 'x64' })).toEqual(['NODE_SEA_BLOB does not start with the SEA blob magic']);
    const other = inspectSea(macho(0x01000007, 'NODE_SEA', '__NODE_SEA_BLOB', BLOB, flipped, false));
    expect(seaProblems(other, { format: 'macho', arch: 'x64', blob: Buffer.concat([BLOB, Buffer.from('x')]) })).toEqual(['NODE_SEA_BLOB is not the blob that was injected']);
  });

  it('refuses a file of neither format', () => {
    expect(() => inspectSea(Buffer.from('#!/bin/sh\necho hi\n'.padEnd(80)))).toThrow('neither a 64-bit little-endian ELF nor a 64-bit Mach-O file');
  });
});
