import { tsImport } from 'tsx/esm/api';

export default async function globalTeardown(): Promise<void> {
  const harness = (await tsImport('./harness.ts', import.meta.url)) as typeof import('./harness.js');
  await harness.teardown();
}
