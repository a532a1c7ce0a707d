// A user's kustomize overlay, as the components' kustomization.yaml files tell users to write one: config/default
// under `resources:` plus the named components. kustomize takes paths relative to the overlay only, so the overlay
// lives in a fresh directory and points back at the checkout.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';

/** Writes the overlay and returns its directory, for `kubectl apply -k <dir>`. */
export function defaultOverlay(components: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'loopguard-overlay-'));
  const rel = (p: string) => relative(dir, join(REPO_ROOT, p));
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    `resources: [${rel('config/default')}]\ncomponents: [${components.map((c) => rel(`config/components/${c}`)).join(', ')}]\n`,
  );
  return dir;
}
