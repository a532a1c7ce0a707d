import { tsImport } from 'tsx/esm/api';
import type * as Harness from './harness.js';

export default async function globalTeardown(): Promise<void> {
  const harness = (await tsImport('./harness.ts', import.meta.url)) as typeof Harness;
  await harness.teardown();
}
