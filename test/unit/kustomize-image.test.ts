// config/default renders with kubectl's built-in kustomize, and the image is set where the README's Install section
// and docs/install.md say: `images:` in config/default (loopguard:<package.json version>, pulled IfNotPresent),
// overridable by an overlay as documented.
import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };

interface Container {
  name: string;
  image?: string;
  imagePullPolicy?: string;
}

function render(dir: string): Array<Record<string, unknown>> {
  const out = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  return parseAllDocuments(out).map((d) => d.toJS() as Record<string, unknown>);
}

function managerOf(docs: Array<Record<string, unknown>>): Container[] {
  const deployments = docs.filter((d) => d['kind'] === 'Deployment');
  expect(deployments.map((d) => (d['metadata'] as { name: string }).name)).toEqual(['loopguard']);
  return (deployments[0] as { spec: { template: { spec: { containers: Container[] } } } }).spec.template.spec.containers;
}

describe('config/default', () => {
  it('renders, and runs loopguard:<package version> pulled IfNotPresent', () => {
    const docs = render(join(REPO, 'config/default'));
    expect(docs.map((d) => d['kind'])).toEqual(expect.arrayContaining(['CustomResourceDefinition', 'Namespace', 'ServiceAccount', 'ClusterRole', 'Deployment']));
    expect(managerOf(docs)).toEqual([expect.objectContaining({ name: 'manager', image: `loopguard:${version}`, imagePullPolicy: 'IfNotPresent' })]);
  });

  it('takes another image from an overlay that sets `images:` (docs/install.md "Kustomize")', () => {
    const dir = mkdtempSync(join(tmpdir(), 'loopguard-overlay-'));
    try {
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        [
          'apiVersion: kustomize.config.k8s.io/v1beta1',
          'kind: Kustomization',
          'resources:',
          `  - ${relative(dir, join(REPO, 'config/default'))}`,
          'images:',
          '  - name: loopguard',
          '    newName: registry.example.com/team/loopguard',
          '    newTag: 1.2.3',
          '',
        ].join('\n'),
      );
      expect(managerOf(render(dir))).toEqual([
        expect.objectContaining({ name: 'manager', image: 'registry.example.com/team/loopguard:1.2.3', imagePullPolicy: 'IfNotPresent' }),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
