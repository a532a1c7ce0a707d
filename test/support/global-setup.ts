// Jest imports global setup files natively (Node strips the types but does not map `.js` imports to
// `.ts` files), so the harness is loaded through tsx, which resolves the project's imports like tsc does.
import { tsImport } from 'tsx/esm/api';
import type * as Harness from './harness.js';

export default async function globalSetup(): Promise<void> {
  const harness = (await tsImport('./harness.ts', import.meta.url)) as typeof Harness;
  await harness.setup();
}
