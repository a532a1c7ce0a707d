// Without Go the integration tests must fail loudly, naming both ways out, never skip silently.
import { describe, expect, it } from '@jest/globals';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureControlPlaneBinaries, MissingGoToolchainError } from '../controlplane/binaries.js';

/** The current PATH minus every directory that holds a `go` executable. */
function pathWithoutGo(): string {
  return (process.env.PATH ?? '')
    .split(':')
    .filter((dir) => {
      try {
        accessSync(join(dir, 'go'), constants.X_OK);
        return false;
      } catch {
        return true;
      }
    })
    .join(':');
}

describe('control plane binaries', () => {
  it('fails without a Go toolchain and without cached binaries, naming Go >= 1.24 and KUBECONFIG as the ways out', async () => {
    const emptyCache = mkdtempSync(join(tmpdir(), 'lg-cache-'));
    const err = await ensureControlPlaneBinaries({
      env: { ...process.env, PATH: pathWithoutGo(), LOOPGUARD_CACHE: emptyCache },
      onOutput: () => undefined,
    })
      .catch((e: unknown) => e)
      .finally(() => rmSync(emptyCache, { recursive: true, force: true }));
    expect(err).toBeInstanceOf(MissingGoToolchainError);
    const message = (err as Error).message;
    expect(message).toContain('Go >= 1.24');
    expect(message).toContain('KUBECONFIG=/path/to/kubeconfig');
    expect(message).toContain('LOOPGUARD_USE_EXISTING_CLUSTER=true');
  });

  it('uses cached binaries without a Go toolchain (a shell without Go on PATH can still start the test ground)', async () => {
    const built = await ensureControlPlaneBinaries({ onOutput: () => undefined });
    const cached = await ensureControlPlaneBinaries({ env: { ...process.env, PATH: pathWithoutGo() }, onOutput: () => undefined });
    expect(cached).toEqual(built);
  });
});
