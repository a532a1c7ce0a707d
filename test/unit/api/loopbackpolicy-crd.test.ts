// Static checks of crds/loopguard.dev_loopbackpolicies.yaml: structural schema (what the apiserver
// requires), bounds on everything (CEL cost), and agreement with the TypeScript mirror.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import {
  GROUP,
  KIND,
  PLURAL,
  SHORT_NAME,
  SINGULAR,
  SPEC_DEFAULTS,
  VERDICTS,
  VERSION,
  withSpecDefaults,
  type LoopbackPolicySpec,
} from '../../../src/api/loopbackpolicy.js';
import { ROOT_CAUSES } from '../../../src/model/root-causes.js';

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  enum?: unknown[];
  default?: unknown;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  'x-kubernetes-validations'?: { rule: string; message?: string; messageExpression?: string }[];
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  [key: string]: unknown;
}

const crd = parse(readFileSync(new URL('../../../crds/loopguard.dev_loopbackpolicies.yaml', import.meta.url), 'utf8')) as {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular: string; shortNames: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns: { name: string; jsonPath: string; type: string; priority?: number }[];
      schema: { openAPIV3Schema: Schema };
    }[];
  };
};
const version = crd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;
const spec = root.properties!.spec!;
const status = root.properties!.status!;

function walk(schema: Schema, path: string, visit: (s: Schema, path: string) => void): void {
  visit(schema, path);
  for (const [k, v] of Object.entries(schema.properties ?? {})) walk(v, `${path}.${k}`, visit);
  if (schema.items) walk(schema.items, `${path}[]`, visit);
  if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${path}{}`, visit);
}

describe('LoopbackPolicy CRD', () => {
  it('has the agreed identity', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.metadata.name).toBe(`${PLURAL}.${GROUP}`);
    expect(crd.spec.group).toBe(GROUP);
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toMatchObject({ kind: KIND, plural: PLURAL, singular: SINGULAR, shortNames: [SHORT_NAME] });
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: VERSION, served: true, storage: true, subresources: { status: {} } });
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

  it('gives every CEL rule a message', () => {
    let rules = 0;
    walk(root, '', (s, path) => {
      for (const v of s['x-kubernetes-validations'] ?? []) {
        rules++;
        expect({ path, rule: v.rule, hasMessage: !!(v.message || v.messageExpression) }).toEqual({ path, rule: v.rule, hasMessage: true });
      }
    });
    expect(rules).toBeGreaterThanOrEqual(8);
  });

  it('defaults match SPEC_DEFAULTS', () => {
    const p = spec.properties!;
    expect(spec.default).toEqual({});
    expect(p.mode!.default).toBe(SPEC_DEFAULTS.mode);
    expect(p.targets!.default).toEqual(SPEC_DEFAULTS.targets);
    expect(p.revertOnDelete!.default).toBe(SPEC_DEFAULTS.revertOnDelete);
    expect(p.l4!.default).toEqual({});
    expect(p.l7!.default).toEqual({});
    for (const [k, v] of Object.entries(SPEC_DEFAULTS.l4)) expect(p.l4!.properties![k]!.default).toBe(v);
    for (const [k, v] of Object.entries(SPEC_DEFAULTS.l7)) expect(p.l7!.properties![k]!.default).toBe(v);
    expect(p.probe!.default).toEqual({});
    expect(p.probe!.properties!.enabled!.default).toBe(SPEC_DEFAULTS.probe.enabled);
    expect(p.probe!.properties!.path!.default).toBe(SPEC_DEFAULTS.probe.path);
    // probe.targets has no schema default: absent means the policy's own targets.
    expect(p.probe!.properties!.targets!.default).toBeUndefined();
    expect(SPEC_DEFAULTS.probe.targets).toEqual(SPEC_DEFAULTS.targets);
    expect(withSpecDefaults(undefined)).toEqual(SPEC_DEFAULTS);
  });

  it.each([
    [{}, { enabled: false, path: '/', targets: ['Service', 'Ingress'] }],
    [{ probe: { enabled: true } }, { enabled: true, path: '/', targets: ['Service', 'Ingress'] }],
    [{ targets: ['Ingress'], probe: { enabled: true, path: '/healthz' } }, { enabled: true, path: '/healthz', targets: ['Ingress'] }],
    [{ probe: { enabled: true, targets: ['Service'] } }, { enabled: true, path: '/', targets: ['Service'] }],
    // Only narrows: a kind the policy does not select is not probed (the CRD refuses it; this is the mirror's reading).
    [{ targets: ['Service'], probe: { enabled: true, targets: ['Ingress'] } }, { enabled: true, path: '/', targets: [] }],
    [{ targets: ['Gateway', 'Service'], probe: { enabled: true, targets: ['Gateway'] } }, { enabled: true, path: '/', targets: ['Gateway'] }],
  ] as const)('probe of %j resolves to %j', (given, resolved) => {
    expect(withSpecDefaults(given as LoopbackPolicySpec).probe).toEqual(resolved);
  });

  it('enums match the TypeScript unions', () => {
    const p = spec.properties!;
    expect(p.mode!.enum).toEqual(['Enforce', 'Audit']);
    expect(p.targets!.items!.enum).toEqual(['Service', 'Ingress', 'Gateway']);
    expect(p.l4!.properties!.healthCheckSource!.enum).toEqual(['Range100_64', 'VIP', 'Unmanaged']);
    expect(p.l4!.properties!.preventLoopback!.enum).toEqual(['Auto', 'Always', 'Never']);
    expect(p.l4!.properties!.sourceSwitch!.enum).toEqual(['Direct', 'TKEFirst']);
    expect(p.probe!.properties!.targets!.items!.enum).toEqual(['Service', 'Ingress', 'Gateway']);
    expect(p.probe!.properties!.targets!['x-kubernetes-list-type']).toBe('set');
    expect(p.selector!.properties!.matchExpressions!.items!.properties!.operator!.enum).toEqual(['In', 'NotIn', 'Exists', 'DoesNotExist']);
    const target = status.properties!.targets!.items!;
    expect(target.properties!.verdict!.enum).toEqual([...VERDICTS]);
    const longestRootCause = Math.max(...Object.keys(ROOT_CAUSES).map((k) => k.length));
    expect(target.properties!.rootCause!.maxLength).toBeGreaterThanOrEqual(longestRootCause);
    expect(p.targets!['x-kubernetes-list-type']).toBe('set');
  });

  it('keeps conditions a map keyed by type (SSA merges by type)', () => {
    const c = status.properties!.conditions!;
    expect(c['x-kubernetes-list-type']).toBe('map');
    expect(c['x-kubernetes-list-map-keys']).toEqual(['type']);
    expect(c.items!.required).toEqual(expect.arrayContaining(['type', 'status', 'lastTransitionTime', 'reason', 'message']));
  });

  it('prints the agreed columns', () => {
    const cols = Object.fromEntries(version.additionalPrinterColumns.map((c) => [c.name, c]));
    expect(cols.Mode?.jsonPath).toBe('.spec.mode');
    expect(cols.Targets?.jsonPath).toBe('.status.counts.total');
    expect(cols.Mitigated?.jsonPath).toBe('.status.counts.mitigated');
    expect(cols['At Risk']?.jsonPath).toBe('.status.counts.atRisk');
    expect(cols.Ready?.jsonPath).toBe('.status.conditions[?(@.type=="Ready")].status');
    expect(cols.Reason?.priority).toBe(1);
    expect(cols.Age).toMatchObject({ type: 'date', jsonPath: '.metadata.creationTimestamp' });
  });
});
