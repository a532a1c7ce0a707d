// `loopguard doctor …` as a user runs it against a local TKE: its own process (the image's entrypoint), with only the
// environment a shell would give it (the kubeconfig, the region, the CLB credentials and the emulator's endpoint).
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { REPO_ROOT } from '../controlplane/crds.js';
import { entrypointArgs } from './operator.js';

export interface DoctorRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runDoctor(args: readonly string[], at: { kubeconfig: string; emulator: ClbEmulator; caller: string }): Promise<DoctorRun> {
  const credentials = at.emulator.callers[at.caller];
  if (!credentials) throw new Error(`the emulator has no caller ${at.caller}`);
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: mkdtempSync(join(tmpdir(), 'loopguard-home-')),
    KUBECONFIG: at.kubeconfig,
    TENCENTCLOUD_REGION: at.emulator.region,
    TENCENTCLOUD_SECRET_ID: credentials.secretId,
    TENCENTCLOUD_SECRET_KEY: credentials.secretKey,
    LOOPGUARD_CLB_ENDPOINT: at.emulator.endpoint,
    LOOPGUARD_CLB_PROTOCOL: 'http',
  };
  return new Promise((resolve) => {
    execFile(process.execPath, entrypointArgs(['doctor', ...args]), { cwd: REPO_ROOT, env, timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}
