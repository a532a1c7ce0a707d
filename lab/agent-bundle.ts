// The lab's agent (lab/agent.ts) as one JavaScript file, which every agent process runs. The lab starts an agent per
// namespace (6 in a 3-node lab, 2 more with --probe; lab.test.ts alone starts 7 labs, 42 agents): through tsx, each
// one took every module it reaches (lab/agent.ts, the src/ it imports, winston) through tsx's loader before its first
// answer, 0.5-0.6 s of CPU; from the bundle Node reads one file, 0.2 s, and esbuild takes 0.2 s per bundle (2-core
// machine, 2026-12-01). esbuild bundles it once per lab, as it bundles the operator for the image
// (scripts/lib/bundle.ts), into a directory of its own under the temp dir, named with the lab's prefix: the lab
// removes it with its namespaces, and a later run removes the directory of a run whose pid is gone (a SIGKILLed
// run), as it does that run's namespaces.
import { rmSync } from 'node:fs';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleLoopguard } from '../scripts/lib/bundle.js';
import { orphaned } from './names.js';

const AGENT_ENTRY = join(dirname(fileURLToPath(import.meta.url)), 'agent.ts');
const SUFFIX = 'agent-';
/** `lg-lab-<pid>-<seq>-agent-XXXXXX`: mkdtemp's random tail after the lab's prefix. */
const BUNDLE_DIR = /^lg-lab-\d+-\d+-agent-[^/]+$/;

/** One lab's agent bundle: made on first use, removed with the lab (lab.ts, Resources). */
export class AgentBundle {
  private dir: string | undefined;
  private made: Promise<string> | undefined;

  constructor(private readonly prefix: string) {}

  /** The bundle's path; bundled on the first call. */
  file(): Promise<string> {
    this.made ??= (async () => {
      // mkdtemp, not a fixed name: the lab runs as root, and a directory someone else created in the shared temp
      // dir first would let them swap the code every agent runs.
      this.dir = await mkdtemp(join(tmpdir(), `${this.prefix}${SUFFIX}`));
      const outfile = join(this.dir, 'agent.cjs');
      // The commit is not looked up: the agent reads no build info (src/version.ts is not in its bundle).
      await bundleLoopguard({ entry: AGENT_ENTRY, outfile, commit: 'unknown', minify: 'names', moduleUrl: pathToFileURL(outfile).href });
      return outfile;
    })();
    return this.made;
  }

  /** Removes the directory once esbuild has stopped writing into it (a lab that failed while it was bundling). */
  async remove(): Promise<void> {
    await this.made?.catch(() => undefined);
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  /** For the exit handler, where nothing asynchronous runs any more (esbuild's process ends with this one). */
  removeSync(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Bundle directories of lab runs whose process is gone (killed with SIGKILL), in `dir` (the temp dir); removed, best
 * effort. Only real directories this user owns: the lab runs as root, and a name in a shared temp dir is anyone's to
 * make, so a directory (or symlink) someone else made with a matching name is left alone — removing it recursively
 * as root would follow whatever they swap into it. A directory mkdtemp made for this user is 0700: nobody else can
 * change what is inside. One that cannot be removed is left for a later run, not a reason to fail this one.
 */
export async function reapOrphanBundles(dir = tmpdir()): Promise<void> {
  const uid = process.getuid?.();
  const orphans: string[] = [];
  for (const name of await readdir(dir)) {
    if (!BUNDLE_DIR.test(name) || !orphaned(name)) continue;
    const st = await lstat(join(dir, name)).catch(() => undefined);
    if (st?.isDirectory() && (uid === undefined || st.uid === uid)) orphans.push(join(dir, name));
  }
  await Promise.allSettled(orphans.map((path) => rm(path, { recursive: true, force: true })));
}
