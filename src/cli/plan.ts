// `loopguard plan -f PATH|-`: the doctor's verdicts for manifests, before they reach a cluster (a CI step on a pull
// request). The cluster profile comes from flags (--kube-proxy-mode, --kube-proxy-version, …) or from a saved
// `loopguard doctor -o json` (--profile-from; flags win); CLB facts manifests cannot know are tried both ways
// (src/cli/offline.ts). Exit status: 0 no risk, 1 risk found (also when it depends on an open CLB fact) unless
// --warn-only, 2 could not read the manifests or the saved profile.
import { readFileSync } from 'node:fs';
import type { ClusterProfileStatus } from '../api/loopbackpolicy.js';
import { OVERRIDE_MODES, profileFrom, type ClusterProfile, type ProfileFlags } from '../model/cluster-profile.js';
import type { CliIo } from './doctor.js';
import { CliError, messageOf } from './errors.js';
import { readManifests } from './manifest-files.js';
import { classify } from './manifests.js';
import { planReport, type Pinned } from './offline.js';
import { render, type OutputFormat } from './output/render.js';
import { exitCodeOf } from './report.js';
import { packageVersion } from '../version.js';

export interface PlanOptions extends ProfileFlags {
  filenames: string[];
  namespace: string;
  profileFrom?: string;
  pinned: Pinned;
  output: OutputFormat;
  warnOnly: boolean;
  stdinName: string;
}

export interface PlanIo extends CliIo {
  readStdin: () => Promise<string>;
}


/** The kube-proxy settings of a saved `loopguard doctor -o json` (or -o yaml is not accepted: JSON only). */
export function savedProfile(text: string, file: string): ProfileFlags {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CliError(`cannot read the cluster profile in ${file}: not JSON (${messageOf(err)}); save it with loopguard doctor -o json`);
  }
  const p = (doc as { kind?: unknown; clusterProfile?: Partial<ClusterProfileStatus> } | null)?.clusterProfile;
  if (typeof doc !== 'object' || doc === null || (doc as { kind?: unknown }).kind !== 'DoctorReport' || typeof p !== 'object' || p === null) {
    throw new CliError(`cannot read the cluster profile in ${file}: expected the output of loopguard doctor -o json (kind DoctorReport with a clusterProfile)`);
  }
  const mode = OVERRIDE_MODES.find((m) => m === p.kubeProxyMode);
  return {
    ...(mode ? { kubeProxyMode: mode } : {}),
    ...(typeof p.kubeProxyVersion === 'string' ? { kubeProxyVersion: p.kubeProxyVersion } : {}),
    // Only a decision the doctor could not derive from the version came from a flag: carry it over.
    ...(p.source === 'Flag' && (p.preventLoopbackSupported === 'True' || p.preventLoopbackSupported === 'False')
      ? { kubeProxyPreventLoopback: p.preventLoopbackSupported === 'True' }
      : {}),
  };
}

export function planProfile(flags: ProfileFlags, saved: ProfileFlags = {}): ClusterProfile {
  const merged: ProfileFlags = { ...saved };
  if (flags.kubeProxyMode) merged.kubeProxyMode = flags.kubeProxyMode;
  if (flags.kubeProxyVersion) merged.kubeProxyVersion = flags.kubeProxyVersion;
  if (flags.kubeProxyPreventLoopback !== undefined) merged.kubeProxyPreventLoopback = flags.kubeProxyPreventLoopback;
  return profileFrom({}, merged);
}

function readProfileFile(path: string): ProfileFlags {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read the cluster profile ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : messageOf(err)}`);
  }
  return savedProfile(text, path);
}

export async function runPlan(options: PlanOptions, io: PlanIo, now: () => Date = () => new Date()): Promise<number> {
  const saved = options.profileFrom ? readProfileFile(options.profileFrom) : {};
  const objects = await readManifests({ paths: options.filenames, readStdin: io.readStdin, stdinName: options.stdinName });
  const profile = planProfile(options, saved);
  const report = planReport(classify(objects, options.namespace), { profile, pinned: options.pinned, now: now() });
  io.stdout.write(render(report, options.output, packageVersion()));
  return exitCodeOf(report, options.warnOnly);
}
