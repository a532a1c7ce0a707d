// The files `loopguard plan -f` names: files, directories (their *.yaml, *.yml and *.json, recursively, in name
// order, like `kubectl apply -R -f`), and `-` for standard input (`kustomize build . | loopguard plan -f -`).
// A path that cannot be read is one line (exit 2), and so is a file over MAX_MANIFEST_BYTES: YAML parsing holds
// several times a file's size in memory (a 50 MB file took the CLI to 977 MB RSS, issue 22 #10), and no set of
// Kubernetes manifests comes near the cap (the apiserver refuses objects over 1.5 MiB; etcd's request limit).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, messageOf } from './errors.js';
import { parseManifests, type ManifestObject } from './manifests.js';

const MANIFEST = /\.(ya?ml|json)$/i;

/** The largest file (or standard input) `plan -f` reads: 10 MiB. */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

/** Standard input went past MAX_MANIFEST_BYTES (readAll stops reading there). */
export class ManifestTooLarge extends Error {}

function tooLarge(name: string, bytes?: number): CliError {
  const size = bytes === undefined ? 'more than' : `${(bytes / 1024 / 1024).toFixed(1)} MiB, over`;
  return new CliError(`cannot read manifest ${name}: ${size} the ${MAX_MANIFEST_BYTES / 1024 / 1024} MiB limit of plan -f; give the manifests as several files or a directory`);
}

export interface ManifestInput {
  paths: readonly string[];
  /** Standard input, read when a path is `-`. */
  readStdin: () => Promise<string>;
  /** How standard input is named in locations (the file a CI step rendered it from). */
  stdinName: string;
}

function reason(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return 'no such file or directory';
  if (e?.code === 'EACCES') return 'permission denied';
  return messageOf(err);
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (MANIFEST.test(entry.name)) out.push(path);
  }
  return out;
}

export async function readManifests(input: ManifestInput): Promise<ManifestObject[]> {
  const objects: ManifestObject[] = [];
  for (const path of input.paths) {
    if (path === '-') {
      let text: string;
      try {
        text = await input.readStdin();
      } catch (err) {
        if (err instanceof ManifestTooLarge) throw tooLarge(input.stdinName);
        throw err;
      }
      if (Buffer.byteLength(text) > MAX_MANIFEST_BYTES) throw tooLarge(input.stdinName, Buffer.byteLength(text));
      objects.push(...parseManifests(text, input.stdinName));
      continue;
    }
    let files: string[];
    try {
      files = statSync(path).isDirectory() ? filesUnder(path) : [path];
    } catch (err) {
      throw new CliError(`cannot read manifest ${path}: ${reason(err)}`);
    }
    if (files.length === 0) throw new CliError(`cannot read manifests: directory ${path} holds no .yaml, .yml or .json file`);
    for (const file of files) {
      let text: string;
      try {
        const { size } = statSync(file);
        if (size > MAX_MANIFEST_BYTES) throw tooLarge(file, size);
        text = readFileSync(file, 'utf8');
      } catch (err) {
        if (err instanceof CliError) throw err;
        throw new CliError(`cannot read manifest ${file}: ${reason(err)}`);
      }
      objects.push(...parseManifests(text, file));
    }
  }
  return objects;
}

/** All of standard input as text; past `maxBytes` it stops reading and throws ManifestTooLarge. */
export async function readAll(stream: NodeJS.ReadableStream, maxBytes = MAX_MANIFEST_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += buf.length;
    if (bytes > maxBytes) throw new ManifestTooLarge(`standard input is over ${maxBytes} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}
