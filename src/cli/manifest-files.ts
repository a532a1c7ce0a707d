// The files `loopguard plan -f` names: files, directories (their *.yaml, *.yml and *.json, recursively, in name
// order, like `kubectl apply -R -f`), and `-` for standard input (`kustomize build . | loopguard plan -f -`).
// A path that cannot be read is one line (exit 2).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, messageOf } from './errors.js';
import { parseManifests, type ManifestObject } from './manifests.js';

const MANIFEST = /\.(ya?ml|json)$/i;

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
      objects.push(...parseManifests(await input.readStdin(), input.stdinName));
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
        text = readFileSync(file, 'utf8');
      } catch (err) {
        throw new CliError(`cannot read manifest ${file}: ${reason(err)}`);
      }
      objects.push(...parseManifests(text, file));
    }
  }
  return objects;
}

/** All of standard input as text. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
