// Without Go the integration tests must fail loudly, naming both ways out, never skip silently.
import { describe, expect, it } from '@jest/globals';
import { accessSync, constants } from 'node:fs';
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
  it('fails fast without a Go toolchain, naming Go >= 1.24 and KUBECONFIG as the ways out', async () => {
    const started = Date.now();
    const err = await ensureControlPlaneBinaries({
      env: { ...process.env, PATH: pathWithoutGo() },
      onOutput: () => undefined,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingGoToolchainError);
    const message = (err as Error).message;
    expect(message).toContain('Go >= 1.24');
    expect(message).toContain('KUBECONFIG=/path/to/kubeconfig');
    expect(message).toContain('LOOPGUARD_USE_EXISTING_CLUSTER=true');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
