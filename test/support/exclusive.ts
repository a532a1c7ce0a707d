// Integration suites run on several workers at once (test/support/integration-runner.js), each worker on its own
// control plane. A few use something that is not the control plane's but the checkout's or the machine's, and hold
// it for their whole run so that no other suite uses it meanwhile:
//   - 'builds': the checkout's dist/ and the image tag (`npm run image`, `npm run build:krew`, `npm run release`,
//     which rebuilds both), per checkout;
//   - 'lab': network namespaces, links and nft tables named lg-lab-*/lg_lab*, which the lab suites count as
//     leftovers: per machine, since another checkout's run would count too.
// A lock is a directory (mkdir is atomic) holding its owner's pid; one whose owner is gone is taken over.
import { afterAll, beforeAll } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';
import { alive } from '../controlplane/launcher.js';

export type SharedResource = 'builds' | 'lab';

const POLL_MS = 250;

function lockDir(resource: SharedResource): string {
  const scope = resource === 'builds' ? `-${createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12)}` : '';
  return join(tmpdir(), `loopguard-test-${resource}${scope}.lock`);
}

function owner(dir: string): number | undefined {
  try {
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Waits until `resource` is this process's; returns how to give it back. */
export async function acquire(resource: SharedResource, timeoutMs: number): Promise<() => void> {
  const dir = lockDir(resource);
  const deadline = Date.now() + timeoutMs;
  let ownerless = 0;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'pid'), String(process.pid));
      const release = (): void => rmSync(dir, { recursive: true, force: true });
      process.once('exit', release);
      return () => {
        process.removeListener('exit', release);
        release();
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = owner(dir);
    // A holder that died (killed run) leaves its directory; one without a pid file for a few polls never wrote it.
    if (pid === undefined ? ++ownerless > 8 : !alive(pid)) {
      // Taken over only if it is still the dead holder's: another waiter may have taken it over and re-created it
      // since the pid was read (a narrow window left, which only killed runs open).
      if (owner(dir) === pid) rmSync(dir, { recursive: true, force: true });
      ownerless = 0;
      continue;
    }
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${dir} (held by pid ${pid ?? 'unknown'})`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Holds `resource` from before the suite's first hook to after its last: call it at the top of the file. */
export function holdForSuite(resource: SharedResource, timeoutMs = 30 * 60_000): void {
  let release: (() => void) | undefined;
  beforeAll(async () => {
    const t0 = Date.now();
    release = await acquire(resource, timeoutMs);
    // Counted in the suite's time: the reporter's figures say how much of it was waiting.
    const waited = Date.now() - t0;
    if (waited > 1_000) console.log(`[loopguard] waited ${(waited / 1000).toFixed(1)} s for the ${resource} lock`);
  }, timeoutMs + 5_000);
  afterAll(() => release?.());
}
