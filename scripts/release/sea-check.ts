// What a single executable carries, read from its bytes, for binaries that cannot run here (the darwin ones, the
// linux/arm64 one): the SEA blob where Node looks for it and the fuse that tells Node to look.
//   - ELF (linux): postject adds a PT_NOTE segment with a note named NODE_SEA_BLOB; Node finds it by walking the
//     PT_NOTE segments (postject's postject-api.h, postject_find_resource).
//   - Mach-O (darwin): a section __NODE_SEA_BLOB in segment NODE_SEA (Node's SEA docs: `--macho-segment-name
//     NODE_SEA`); LC_CODE_SIGNATURE, if any, is read too: the one the Node package shipped no longer covers the file.
//   - both: the sentinel fuse string NODE_SEA_FUSE_…, which postject flips from :0 to :1.
// Pure over a Buffer; test/unit/release-sea-check.test.ts builds small binaries of both formats.
import { SEA_FUSE, SEA_MACHO_SEGMENT, SEA_RESOURCE } from '../plugin/sea.js';

/** Node's SEA blob magic (node_sea.h kMagic), the blob's first 4 bytes, little-endian. */
export const SEA_BLOB_MAGIC = 0x0143da20;

export interface SeaInspection {
  format: 'elf' | 'macho';
  /** Node's names: x64 or arm64. */
  arch: 'x64' | 'arm64' | 'other';
  /** The injected blob, where Node reads it; undefined when there is none. */
  blob: Buffer | undefined;
  /** `flipped`: postject marked the blob present (…:1); `unflipped`: a plain Node (…:0). */
  fuse: 'flipped' | 'unflipped' | 'absent';
  /** Mach-O only: whether a code signature load command is present. */
  codeSignature?: boolean;
}

const ELF_MAGIC = 0x464c457f; // "\x7fELF" read little-endian
const PT_NOTE = 4;
const EM_X86_64 = 62;
const EM_AARCH64 = 183;
const MH_MAGIC_64 = 0xfeedfacf;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const CPU_X86_64 = 0x01000007;
const CPU_ARM64 = 0x0100000c;

function fuseState(buf: Buffer): SeaInspection['fuse'] {
  if (buf.includes(`${SEA_FUSE}:1`)) return 'flipped';
  return buf.includes(`${SEA_FUSE}:0`) ? 'unflipped' : 'absent';
}

const roundUp4 = (n: number): number => (n + 3) & ~3;

function cString(buf: Buffer, start: number, max: number): string {
  const end = buf.indexOf(0, start);
  return buf.toString('latin1', start, end < 0 || end > start + max ? start + max : end);
}

function elfBlob(buf: Buffer): Buffer | undefined {
  const phoff = Number(buf.readBigUInt64LE(0x20));
  const phentsize = buf.readUInt16LE(0x36);
  const phnum = buf.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) {
    const ph = phoff + i * phentsize;
    if (buf.readUInt32LE(ph) !== PT_NOTE) continue;
    let pos = Number(buf.readBigUInt64LE(ph + 8));
    const end = pos + Number(buf.readBigUInt64LE(ph + 32));
    while (pos + 12 <= end) {
      const namesz = buf.readUInt32LE(pos);
      const descsz = buf.readUInt32LE(pos + 4);
      // An ELF note: name and descriptor each padded to 4 bytes.
      if (namesz !== 0 && descsz !== 0 && cString(buf, pos + 12, namesz) === SEA_RESOURCE) {
        const desc = pos + 12 + roundUp4(namesz);
        return buf.subarray(desc, desc + descsz);
      }
      pos += 12 + roundUp4(namesz) + roundUp4(descsz);
    }
  }
  return undefined;
}

function machoBlobAndSignature(buf: Buffer): { blob: Buffer | undefined; codeSignature: boolean } {
  const ncmds = buf.readUInt32LE(16);
  let blob: Buffer | undefined;
  let codeSignature = false;
  let lc = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = buf.readUInt32LE(lc);
    const size = buf.readUInt32LE(lc + 4);
    if (cmd === LC_CODE_SIGNATURE) codeSignature = true;
    if (cmd === LC_SEGMENT_64 && cString(buf, lc + 8, 16) === SEA_MACHO_SEGMENT) {
      const nsects = buf.readUInt32LE(lc + 64);
      for (let s = 0; s < nsects; s++) {
        const sect = lc + 72 + s * 80;
        if (cString(buf, sect, 16) !== `__${SEA_RESOURCE}`) continue;
        const bytes = Number(buf.readBigUInt64LE(sect + 40));
        const offset = buf.readUInt32LE(sect + 48);
        blob = buf.subarray(offset, offset + bytes);
      }
    }
    lc += size;
  }
  return { blob, codeSignature };
}

/** Reads what a Node single executable carries; throws on a file that is neither a 64-bit little-endian ELF nor Mach-O. */
export function inspectSea(buf: Buffer): SeaInspection {
  if (buf.length >= 64 && buf.readUInt32LE(0) === ELF_MAGIC && buf[4] === 2 && buf[5] === 1) {
    const machine = buf.readUInt16LE(0x12);
    return { format: 'elf', arch: machine === EM_X86_64 ? 'x64' : machine === EM_AARCH64 ? 'arm64' : 'other', blob: elfBlob(buf), fuse: fuseState(buf) };
  }
  if (buf.length >= 32 && buf.readUInt32LE(0) === MH_MAGIC_64) {
    const cpu = buf.readUInt32LE(4);
    const { blob, codeSignature } = machoBlobAndSignature(buf);
    return { format: 'macho', arch: cpu === CPU_X86_64 ? 'x64' : cpu === CPU_ARM64 ? 'arm64' : 'other', blob, fuse: fuseState(buf), codeSignature };
  }
  throw new Error('neither a 64-bit little-endian ELF nor a 64-bit Mach-O file');
}

/** Why a binary is not the single executable of `blob` for `want` (empty: it is). */
export function seaProblems(got: SeaInspection, want: { format: 'elf' | 'macho'; arch: 'x64' | 'arm64'; blob?: Buffer }): string[] {
  const problems: string[] = [];
  if (got.format !== want.format || got.arch !== want.arch) problems.push(`a ${got.format}/${got.arch} file, expected ${want.format}/${want.arch}`);
  if (got.fuse !== 'flipped') problems.push(`the SEA fuse is ${got.fuse}`);
  if (!got.blob) problems.push(`no ${SEA_RESOURCE} where Node looks for it`);
  else if (got.blob.length < 8 || got.blob.readUInt32LE(0) !== SEA_BLOB_MAGIC) problems.push(`${SEA_RESOURCE} does not start with the SEA blob magic`);
  else if (want.blob && !got.blob.equals(want.blob)) problems.push(`${SEA_RESOURCE} is not the blob that was injected`);
  return problems;
}
