// Helpers of the suites that drive loopguard's CLB client (src/cloud) against the emulator.
import { expect } from '@jest/globals';
import type { AdminLoadBalancer } from '../../sim/clb-emulator/index.js';
import { ClbError } from '../../src/cloud/index.js';

export const listenerId = (lb: AdminLoadBalancer, i = 0): string => lb.Listeners[i]?.ListenerId ?? '';

/** The ClbError a call fails with (the test fails if it does not fail with one). */
export async function caught(p: Promise<unknown>): Promise<ClbError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ClbError);
  return err as ClbError;
}
