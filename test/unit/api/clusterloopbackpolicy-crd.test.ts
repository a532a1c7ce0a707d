// Static checks of crds/loopguard.dev_clusterloopbackpolicies.yaml (issue 24): the CRD is hand-written like the
// namespaced one, so this test is what keeps the two from drifting: every spec field the kinds share must have the
// same schema (descriptions aside), the same spec-level rules, and the same status items plus `namespace`. Also:
// structural, bounded, every rule with a message, defaults and enums as the TypeScript mirror says, installed by
// kustomize (crds/kustomization.yaml) and the chart (charts/loopguard/crds/).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import {
  CLUSTER_KIND,
  CLUSTER_PLURAL,
  CLUSTER_SHORT_NAME,
  CLUSTER_SINGULAR,
  CLUSTER_SPEC_DEFAULTS,
  MAX_MODE_OVERRIDES,
  MAX_STATUS_NAMESPACES,
  withClusterSpecDefaults,
} from '../../../src/api/clusterloopbackpolicy.js';
import { GROUP, MAX_STATUS_TARGETS, SPEC_DEFAULTS, VERSION } from '../../../src/api/loopbackpolicy.js';
import { REPO_ROOT } from '../../controlplane/crds.js';

interface Schema {
  type?: string;
  description?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  enum?: unknown[];
  default?: unknown;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  required?: string[];
  'x-kubernetes-validations'?: { rule: string; message?: string; messageExpression?: string; reason?: string }[];
  [key: string]: unknown;
}

interface Crd {
  apiVersion: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular: string; shortNames: string[]; categories?: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns: { name: string; jsonPath: string; type: string; priority?: number }[];
      schema: { openAPIV3Schema: Schema };
    }[];
  };
}

const FILE = 'loopguard.dev_clusterloopbackpolicies.yaml';
const load = (file: string) => parse(readFileSync(join(REPO_ROOT, 'crds', file), 'utf8')) as Crd;
const crd = load(FILE);
const namespaced = load('loopguard.dev_loopbackpolicies.yaml');
const version = crd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;
const spec = root.properties!.spec!;
const status = root.properties!.status!;
const nsRoot = namespaced.spec.versions[0]!.schema.openAPIV3Schema;

function walk(schema: Schema, path: string, visit: (s: Schema, path: string) => void): void {
  visit(schema, path);
  for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v, `${path}.${k}`, visit);
  if (schema.items) walk(schema.items, `${path}[]`, visit);
  if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${path}{}`, visit);
}

/** The schema without descriptions: what validation and defaulting see. */
function semantic(schema: Schema): Schema {
  return JSON.parse(JSON.stringify(schema, (key: string, value: unknown) => (key === 'description' ? undefined : value))) as Schema;
}

const SHARED_SPEC = ['mode', 'selector', 'targets', 'l4', 'l7', 'revertOnDelete', 'probe'] as const;
const CLUSTER_ONLY_SPEC = ['namespaceSelector', 'systemNamespaces', 'modeOverrides', 'precedence', 'skipAnnotation'];

describe('ClusterLoopbackPolicy CRD', () => {
  it('has the agreed identity: cluster-scoped, in the loopguard group and category', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.metadata.name).toBe(`${CLUSTER_PLURAL}.${GROUP}`);
    expect(crd.spec.group).toBe(GROUP);
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names).toMatchObject({ kind: CLUSTER_KIND, plural: CLUSTER_PLURAL, singular: CLUSTER_SINGULAR, shortNames: [CLUSTER_SHORT_NAME] });
    expect(crd.spec.names.categories).toEqual(namespaced.spec.names.categories);
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: VERSION, served: true, storage: true, subresources: { status: {} } });
  });

  it('shares every LoopbackPolicy spec field unchanged (descriptions aside) and adds only its own', () => {
    const own = spec.properties!;
    const theirs = nsRoot.properties!.spec!.properties!;
    expect(Object.keys(theirs).sort()).toEqual([...SHARED_SPEC].sort());
    expect(Object.keys(own).sort()).toEqual([...SHARED_SPEC, ...CLUSTER_ONLY_SPEC].sort());
    for (const field of SHARED_SPEC) expect({ field, schema: semantic(own[field]!) }).toEqual({ field, schema: semantic(theirs[field]!) });
    // The namespace selectors are the same label-selector schema as spec.selector, with the same rules.
    expect(semantic(own.namespaceSelector!)).toEqual(semantic(theirs.selector!));
    expect(semantic(own.modeOverrides!.items!.properties!.namespaceSelector!)).toEqual(semantic(theirs.selector!));
  });

  it("keeps the namespaced kind's spec-level rules and adds the system-namespaces one", () => {
    const theirs = nsRoot.properties!.spec!['x-kubernetes-validations']!;
    const own = spec['x-kubernetes-validations']!;
    expect(own.slice(0, theirs.length)).toEqual(theirs);
    expect(own.slice(theirs.length).map((r) => r.message)).toEqual([expect.stringContaining('systemNamespaces: Include needs a namespaceSelector')]);
  });

  it('keeps the status of the namespaced kind, with the namespace on every target and release', () => {
    const own = status.properties!;
    const theirs = nsRoot.properties!.status!.properties!;
    for (const field of ['observedGeneration', 'conditions', 'clusterProfile', 'counts', 'targetsTruncated', 'targetsNote', 'lastEvaluatedTime']) {
      expect({ field, schema: semantic(own[field]!) }).toEqual({ field, schema: semantic(theirs[field]!) });
    }
    for (const field of ['targets', 'releases']) {
      const o = semantic(own[field]!);
      const t = semantic(theirs[field]!);
      expect(o.items!.properties!.namespace).toEqual({ type: 'string', maxLength: 63 });
      expect(o.items!.required).toEqual([...t.items!.required!.slice(0, 1), 'namespace', ...t.items!.required!.slice(1)]);
      delete o.items!.properties!.namespace;
      o.items!.required = t.items!.required;
      expect({ field, schema: o }).toEqual({ field, schema: t });
    }
    expect(own.targets!.maxItems).toBe(MAX_STATUS_TARGETS);
    expect(own.byNamespace!.maxItems).toBe(MAX_STATUS_NAMESPACES);
    expect(semantic(own.byNamespace!.items!.properties!.counts!)).toEqual(semantic(theirs.counts!));
  });

  it('is structural: every node has a type, no additionalProperties beside properties', () => {
    walk(root, '', (s, path) => {
      expect({ path, type: s.type }).toEqual({ path, type: expect.any(String) });
      if (s.properties) expect({ path, additionalProperties: s.additionalProperties }).toEqual({ path, additionalProperties: undefined });
      if (s.type === 'array') expect({ path, items: !!s.items }).toEqual({ path, items: true });
    });
  });

  it('bounds every string, list and map (CEL cost budget, etcd size)', () => {
    walk(root, '', (s, path) => {
      if (path === '.apiVersion' || path === '.kind' || path.startsWith('.metadata')) return;
      if (s.type === 'string' && !s.enum && s.format !== 'date-time') expect({ path, maxLength: s.maxLength }).toEqual({ path, maxLength: expect.any(Number) });
      if (s.type === 'array') expect({ path, maxItems: s.maxItems }).toEqual({ path, maxItems: expect.any(Number) });
      if (s.type === 'object' && s.additionalProperties) expect({ path, maxProperties: s.maxProperties }).toEqual({ path, maxProperties: expect.any(Number) });
    });
  });

  it('gives every CEL rule a message, and never the Duplicate reason (the apiserver drops the message for it)', () => {
    let rules = 0;
    walk(root, '', (s, path) => {
      for (const v of s['x-kubernetes-validations'] ?? []) {
        rules++;
        expect({ path, rule: v.rule, hasMessage: !!(v.message || v.messageExpression) }).toEqual({ path, rule: v.rule, hasMessage: true });
        expect({ path, reason: v.reason }).not.toEqual({ path, reason: 'FieldValueDuplicate' });
      }
    });
    expect(rules).toBeGreaterThanOrEqual(20);
  });

  it('defaults match SPEC_DEFAULTS and CLUSTER_SPEC_DEFAULTS', () => {
    const p = spec.properties!;
    expect(spec.default).toEqual({});
    expect(p.mode!.default).toBe(SPEC_DEFAULTS.mode);
    for (const [k, v] of Object.entries(CLUSTER_SPEC_DEFAULTS)) expect({ k, default: p[k]!.default }).toEqual({ k, default: v });
    expect(p.namespaceSelector!.default).toBeUndefined();
    expect(p.modeOverrides!.default).toBeUndefined();
    expect(withClusterSpecDefaults(undefined)).toEqual({ ...SPEC_DEFAULTS, namespaceSelector: {}, modeOverrides: [], ...CLUSTER_SPEC_DEFAULTS });
  });

  it('enums match the TypeScript unions', () => {
    const p = spec.properties!;
    expect(p.systemNamespaces!.enum).toEqual(['Exclude', 'Include']);
    expect(p.precedence!.enum).toEqual(['NamespacedFirst', 'ClusterFirst']);
    // Kubernetes spells it this way (topologySpreadConstraints' nodeAffinityPolicy: Honor | Ignore).
    expect(p.skipAnnotation!.enum).toEqual(['Honor', 'Ignore']);
    expect(p.modeOverrides!.items!.properties!.mode!.enum).toEqual(p.mode!.enum);
    expect(p.modeOverrides!.maxItems).toBe(MAX_MODE_OVERRIDES);
    expect(status.properties!.byNamespace!.items!.properties!.mode!.enum).toEqual(p.mode!.enum);
  });

  it('prints the agreed columns', () => {
    const cols = Object.fromEntries(version.additionalPrinterColumns.map((c) => [c.name, c]));
    const wide = version.additionalPrinterColumns.filter((c) => !c.priority).map((c) => c.name);
    expect(wide).toEqual(['Mode', 'Namespaces', 'Targets', 'Mitigated', 'At Risk', 'Ready', 'Age']);
    expect(cols.Mode?.jsonPath).toBe('.spec.mode');
    expect(cols.Namespaces?.jsonPath).toBe('.status.namespaces.selected');
    expect(cols.Targets?.jsonPath).toBe('.status.counts.total');
    expect(cols['At Risk']?.jsonPath).toBe('.status.counts.atRisk');
    expect(cols.Ready?.jsonPath).toBe('.status.conditions[?(@.type=="Ready")].status');
    // Every column's path exists in the schema.
    for (const c of version.additionalPrinterColumns) {
      if (c.jsonPath.startsWith('.metadata') || c.jsonPath.includes('[?')) continue;
      let node: Schema | undefined = root;
      for (const part of c.jsonPath.slice(1).split('.')) node = node?.properties?.[part];
      expect({ column: c.name, found: node?.type }).toEqual({ column: c.name, found: c.type === 'integer' ? 'integer' : 'string' });
    }
  });

  it('ships with its controller: in crds/kustomization.yaml (so config/default) and, byte for byte, in the chart', () => {
    const kustomization = parse(readFileSync(join(REPO_ROOT, 'crds/kustomization.yaml'), 'utf8')) as { resources: string[] };
    expect(kustomization.resources).toContain(FILE);
    expect(readdirSync(join(REPO_ROOT, 'charts/loopguard/crds'))).toContain(FILE);
    expect(readFileSync(join(REPO_ROOT, 'charts/loopguard/crds', FILE)).equals(readFileSync(join(REPO_ROOT, 'crds', FILE)))).toBe(true);
  });
});
