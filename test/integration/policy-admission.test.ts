// Admission of LoopbackPolicy through a real kube-apiserver, as a user meets it: `kubectl apply -f -`.
// Invalid specs must be rejected with a message that says what is wrong; valid ones are accepted and
// defaulted by the CRD's schema (crds/loopguard.dev_loopbackpolicies.yaml).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createNamespace, deleteNamespace, kubectl } from '../support/kube.js';
import { applyPolicy, getPolicy, policyManifest } from '../support/policy.js';
import { refusalTable } from '../support/refusals.js';

let ns: string;

beforeAll(async () => {
  ns = await createNamespace('policy-admission');
});

afterAll(async () => {
  if (ns) await deleteNamespace(ns);
});

const apply = (name: string, spec: unknown, extra?: Record<string, unknown>) => applyPolicy(policyManifest({ namespace: ns, name }, spec, extra));
/** The policy as stored (defaulted by the CRD). */
const stored = (name: string) => getPolicy({ namespace: ns, name });

const label63 = 'a'.repeat(63);
const longPrefix = Array.from({ length: 5 }, () => 'b'.repeat(60)).join('.'); // valid DNS labels, 304 chars

/** How a case's object differs from `invalid-<i>` in the test namespace, sent with `kubectl apply`. */
interface Sent {
  name?: string;
  metadata?: Record<string, unknown>;
  /**
   * `kubectl create`: `apply` keeps the whole object in its last-applied annotation, so an object over 256 KiB is
   * refused for that annotation before its spec is looked at.
   */
  create?: boolean;
}

const MiB = 1 << 20;

// [case, spec, fragments the stderr must contain, how it is sent]. Every message names the field and what is
// allowed; the apiserver's own (type, enum, unknown field, metadata) where they do, the CRD's OpenAPI/CEL otherwise.
const invalid: [string, unknown, string[], Sent?][] = [
  ['mode in lower case', { mode: 'enforce' }, ['spec.mode', 'Unsupported value: "enforce"', '"Enforce", "Audit"']],
  ['mode empty', { mode: '' }, ['spec.mode', 'Unsupported value: ""']],
  ['mode not a string', { mode: 1 }, ['spec.mode', 'must be of type string']],
  ['misspelt field', { modee: 'Audit' }, ['unknown field "spec.modee"']],
  ['targets empty', { targets: [] }, ['spec.targets', 'list one or more of Service, Ingress, Gateway; leave targets out to select Services and Ingresses']],
  ['targets duplicated', { targets: ['Service', 'Service'] }, ['spec.targets[1]', 'Duplicate value: "Service"']],
  ['targets with an unknown kind', { targets: ['Pod'] }, ['spec.targets[0]', 'Unsupported value: "Pod"', '"Service", "Ingress", "Gateway"']],
  ['targets with four entries', { targets: ['Service', 'Ingress', 'Gateway', 'Ingress'] }, ['spec.targets', 'must have at most 3 items']],
  ['targets as a string', { targets: 'Service' }, ['spec.targets', 'must be of type array']],
  ['l4 as a string', { l4: 'Range100_64' }, ['spec.l4', 'must be of type object']],
  ['l4.healthCheckSource misspelt', { l4: { healthCheckSource: 'Range100-64' } }, ['spec.l4.healthCheckSource', 'Unsupported value: "Range100-64"']],
  ['l4.preventLoopback in lower case', { l4: { preventLoopback: 'always' } }, ['spec.l4.preventLoopback', 'Unsupported value: "always"']],
  ['l4.sourceSwitch spelled as a person would say it', { l4: { sourceSwitch: 'TKE first' } }, ['spec.l4.sourceSwitch', 'Unsupported value: "TKE first"', '"Direct", "TKEFirst"']],
  [
    'VIP source with the default preventLoopback (Auto)',
    { l4: { healthCheckSource: 'VIP' } },
    ['l4.preventLoopback: Auto needs l4.healthCheckSource: Range100_64', 'every backend would look dead', 'set l4.preventLoopback: Never'],
  ],
  [
    'Unmanaged source with preventLoopback Always',
    { l4: { healthCheckSource: 'Unmanaged', preventLoopback: 'Always' } },
    ['l4.preventLoopback: Always needs l4.healthCheckSource: Range100_64', 'healthCheckSource: Unmanaged'],
  ],
  [
    'VIP source with preventLoopback Always',
    { l4: { healthCheckSource: 'VIP', preventLoopback: 'Always' } },
    ['bind the CLB VIP on every node', 'would be dropped'],
  ],
  [
    'preventLoopback Always without Service targets',
    { targets: ['Ingress'], l4: { preventLoopback: 'Always' } },
    ['spec.l4.preventLoopback', 'has no effect unless spec.targets includes Service'],
  ],
  ['l7.keepalive as a string', { l7: { keepalive: 'true' } }, ['spec.l7.keepalive', 'must be of type boolean']],
  ['l7.healthCheckSource in lower case', { l7: { healthCheckSource: 'vip' } }, ['spec.l7.healthCheckSource', 'Unsupported value: "vip"']],
  [
    'allowCLBTrafficByDefault without keepalive',
    { l7: { keepalive: false, allowCLBTrafficByDefault: true } },
    ['l7.allowCLBTrafficByDefault: true only has an effect with l7.keepalive: true'],
  ],
  [
    'allowCLBTrafficByDefault without Ingress targets',
    { targets: ['Service'], l7: { allowCLBTrafficByDefault: true } },
    ['spec.l7.allowCLBTrafficByDefault', 'has no effect unless spec.targets includes Ingress'],
  ],
  ['revertOnDelete as a string', { revertOnDelete: 'yes' }, ['spec.revertOnDelete', 'must be of type boolean']],
  ['selector as a string', { selector: 'app=web' }, ['spec.selector', 'must be of type object']],
  ['matchLabels key with a space', { selector: { matchLabels: { 'bad key!': 'x' } } }, ['matchLabels key "bad key!" is not a valid label key']],
  [
    'matchLabels value with a space',
    { selector: { matchLabels: { app: 'has space' } } },
    ['matchLabels value "has space" (key "app") is not a valid label value'],
  ],
  ['matchLabels value too long', { selector: { matchLabels: { app: `${label63}x` } } }, ['spec.selector.matchLabels.app', 'Too long', '63']],
  [
    'too many matchLabels',
    { selector: { matchLabels: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])) } },
    ['spec.selector.matchLabels', 'must have at most 32'],
  ],
  ['In without values', { selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } }, ['operator In needs at least one entry in values']],
  ['NotIn with empty values', { selector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: [] }] } }, ['operator NotIn needs at least one entry in values']],
  [
    'Exists with values',
    { selector: { matchExpressions: [{ key: 'app', operator: 'Exists', values: ['web'] }] } },
    ['operator Exists must not have values'],
  ],
  [
    'DoesNotExist with values',
    { selector: { matchExpressions: [{ key: 'app', operator: 'DoesNotExist', values: ['web'] }] } },
    ['operator DoesNotExist must not have values'],
  ],
  ['operator in lower case', { selector: { matchExpressions: [{ key: 'app', operator: 'in', values: ['web'] }] } }, ['Unsupported value: "in"', '"DoesNotExist"']],
  [
    'operator missing',
    { selector: { matchExpressions: [{ key: 'app' }] } },
    ['spec.selector.matchExpressions[0].operator', 'Required value', 'one of In or NotIn (with values), Exists or DoesNotExist (without values)'],
  ],
  ['key missing', { selector: { matchExpressions: [{ operator: 'Exists' }] } }, ['spec.selector.matchExpressions[0].key', 'Required value', 'the label key to test']],
  ['key with two slashes', { selector: { matchExpressions: [{ key: 'a/b/c', operator: 'Exists' }] } }, ['key "a/b/c" is not a valid label key']],
  ['key name longer than 63', { selector: { matchExpressions: [{ key: `example.com/${label63}x`, operator: 'Exists' }] } }, ['is not a valid label key']],
  [
    'key prefix longer than 253',
    { selector: { matchExpressions: [{ key: `${longPrefix}/app`, operator: 'Exists' }] } },
    ['the prefix of a label key (before "/") must be at most 253 characters'],
  ],
  [
    'value with a space in values',
    { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['ok', 'not ok'] }] } },
    ['value "not ok" is not a valid label value'],
  ],
  [
    'too many matchExpressions',
    { selector: { matchExpressions: Array.from({ length: 17 }, (_, i) => ({ key: `k${i}`, operator: 'Exists' })) } },
    ['spec.selector.matchExpressions', 'must have at most 16 items'],
  ],
  [
    'too many values',
    { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: Array.from({ length: 65 }, (_, i) => `v${i}`) }] } },
    ['spec.selector.matchExpressions[0].values', 'must have at most 64 items'],
  ],
  [
    'value longer than 63',
    { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [`${label63}x`] }] } },
    ['spec.selector.matchExpressions[0].values[0]', 'Too long'],
  ],
  // --- the spec's shape: what YAML typos and copied snippets produce
  ['spec as a list', [], ['spec', 'must be of type object']],
  ['spec as a string', 'Audit', ['spec', 'must be of type object']],
  ['spec field misspelt (selectors)', { selectors: {} }, ['unknown field "spec.selectors"']],
  ['revertOnDelete as a number', { revertOnDelete: 0 }, ['spec.revertOnDelete', 'must be of type boolean']],
  ['mode with a trailing space', { mode: 'Audit ' }, ['spec.mode', 'Unsupported value: "Audit "', '"Enforce", "Audit"']],
  ['mode of another tool (DryRun)', { mode: 'DryRun' }, ['spec.mode', 'Unsupported value: "DryRun"', '"Enforce", "Audit"']],
  ['targets in lower case', { targets: ['service'] }, ['spec.targets[0]', 'Unsupported value: "service"', '"Service", "Ingress", "Gateway"']],
  ['targets with an empty entry (null)', { targets: [null] }, ['spec.targets[0]', 'must be of type string', '"Service", "Ingress"']],
  ['targets as a map', { targets: { Service: true } }, ['unknown field "spec.targets.Service"']],
  // --- l4 / l7
  [
    'l4.healthCheckSource written as the CIDR',
    { l4: { healthCheckSource: '100.64.0.0/10' } },
    ['spec.l4.healthCheckSource', 'Unsupported value: "100.64.0.0/10"', '"Range100_64", "VIP", "Unmanaged"'],
  ],
  ['l4.healthCheckSource empty', { l4: { healthCheckSource: '' } }, ['spec.l4.healthCheckSource', 'Unsupported value: ""', '"Range100_64", "VIP", "Unmanaged"']],
  ['l4.preventLoopback as a boolean', { l4: { preventLoopback: true } }, ['spec.l4.preventLoopback', 'must be of type string', '"Auto", "Always", "Never"']],
  ['l4 field in the wrong case', { l4: { preventloopback: 'Auto' } }, ['unknown field "spec.l4.preventloopback"']],
  ['l7 as a list', { l7: [] }, ['spec.l7', 'must be of type object']],
  ['l7 field in the wrong case', { l7: { keepAlive: true } }, ['unknown field "spec.l7.keepAlive"']],
  ['l7.allowCLBTrafficByDefault as a string', { l7: { allowCLBTrafficByDefault: 'true' } }, ['spec.l7.allowCLBTrafficByDefault', 'must be of type boolean']],
  // docs/dns.md §4: the rewrite changes answers for every pod, so only the cluster kind may ask for it.
  [
    'l7.inClusterDNS: Managed on a namespaced policy',
    { l7: { inClusterDNS: 'Managed' } },
    ['spec.l7.inClusterDNS', 'l7.inClusterDNS: Managed changes DNS answers for every pod of the cluster, so only a', 'ClusterLoopbackPolicy'],
  ],
  ['l7.inClusterDNS in lower case', { l7: { inClusterDNS: 'managed' } }, ['spec.l7.inClusterDNS', 'Unsupported value: "managed"', '"Unmanaged", "Managed"']],
  ['l7.inClusterDNS as a boolean', { l7: { inClusterDNS: false } }, ['spec.l7.inClusterDNS', 'must be of type string']],
  // --- selectors
  ['selector field misspelt (matchLabel)', { selector: { matchLabel: { app: 'web' } } }, ['unknown field "spec.selector.matchLabel"']],
  ['matchLabels as a list', { selector: { matchLabels: ['app=web'] } }, ['spec.selector.matchLabels', 'must be of type object']],
  ['matchLabels value a number', { selector: { matchLabels: { replicas: 3 } } }, ['spec.selector.matchLabels.replicas', 'must be of type string']],
  ['matchLabels value in Unicode', { selector: { matchLabels: { app: 'wéb' } } }, ['matchLabels value "wéb" (key "app") is not a valid label value', 'letters, digits']],
  ['matchLabels key in Unicode', { selector: { matchLabels: { 名前: 'web' } } }, ['matchLabels key "名前" is not a valid label key']],
  ['matchLabels key empty', { selector: { matchLabels: { '': 'web' } } }, ['matchLabels key "" is not a valid label key']],
  [
    'matchLabels key of 1 MiB',
    { selector: { matchLabels: { ['k'.repeat(MiB)]: 'v' } } },
    ['spec.selector.matchLabels', 'matchLabels keys must be at most 317 characters'],
    { create: true },
  ],
  [
    'matchExpressions as a map',
    { selector: { matchExpressions: { key: 'app', operator: 'Exists' } } },
    ['unknown field "spec.selector.matchExpressions.key"', 'unknown field "spec.selector.matchExpressions.operator"'],
  ],
  ['matchExpressions entry as a string', { selector: { matchExpressions: ['app in (web)'] } }, ['spec.selector.matchExpressions[0]', 'must be of type object']],
  ['key and operator both missing', { selector: { matchExpressions: [{}] } }, ['matchExpressions[0].key: Required value', 'matchExpressions[0].operator: Required value']],
  ['key empty', { selector: { matchExpressions: [{ key: '', operator: 'Exists' }] } }, ['key "" is not a valid label key']],
  ['key in Unicode', { selector: { matchExpressions: [{ key: 'équipe', operator: 'Exists' }] } }, ['key "équipe" is not a valid label key']],
  ['values as a string', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: 'web' }] } }, ['spec.selector.matchExpressions[0].values', 'must be of type array']],
  ['values with a number', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [1] }] } }, ['spec.selector.matchExpressions[0].values[0]', 'must be of type string']],
  ['values in Unicode', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['café'] }] } }, ['value "café" is not a valid label value']],
  // --- the object around the spec: names are DNS-1123, labels ASCII, annotations at most 256 KiB in all
  ['a name with capitals', {}, ['metadata.name', 'a lowercase RFC 1123 subdomain'], { name: 'Protect-Web' }],
  ['a name in Unicode', {}, ['metadata.name: Invalid value: "防护"', 'a lowercase RFC 1123 subdomain'], { name: '防护' }],
  ['a name of 254 characters', {}, ['metadata.name', 'must be no more than 253'], { name: 'a'.repeat(254) }],
  ['a label value in Unicode', {}, ['metadata.labels: Invalid value: "保护"', 'a valid label must be'], { metadata: { labels: { team: '保护' } } }],
  [
    'an annotation of 1 MiB',
    {},
    ['metadata.annotations: Too long: may not be more than 262144 bytes'],
    { metadata: { annotations: { 'example.com/note': 'x'.repeat(MiB) } }, create: true },
  ],
];

describe('LoopbackPolicy admission', () => {
  it('has at least 40 distinct invalid cases', () => {
    expect(invalid.length).toBeGreaterThanOrEqual(40);
    expect(new Set(invalid.map(([name]) => name)).size).toBe(invalid.length);
    expect(new Set(invalid.map(([, spec, , sent]) => JSON.stringify([spec, sent]))).size).toBe(invalid.length);
  });

  const expectRefused = refusalTable(() =>
    invalid.map(([, spec, , sent], i) => {
      const manifest = policyManifest({ namespace: ns, name: sent?.name ?? `invalid-${i}` }, spec);
      if (sent?.metadata) manifest.metadata = { ...manifest.metadata, ...sent.metadata };
      return { manifest, create: sent?.create };
    }),
  );

  // The rows sent with `kubectl apply` go to the apiserver as one file (test/support/refusals.ts); each is judged on
  // its own refusal.
  it.each(invalid.map(([name, , fragments], i) => [name, i, fragments] as const))('rejects: %s', (_name, i, fragments) => expectRefused(i, fragments));

  it('stored none of the invalid policies', async () => {
    const r = await kubectl(['get', 'lbp', '-n', ns, '-o', 'name']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/invalid-/);
  });

  it('accepts an empty spec and fills in every default (Audit: a policy changes nothing unless it says Enforce)', async () => {
    const r = await apply('defaults', {});
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await stored('defaults')).spec).toEqual({
      mode: 'Audit',
      targets: ['Service', 'Ingress'],
      l4: { healthCheckSource: 'Range100_64', preventLoopback: 'Auto', sourceSwitch: 'Direct' },
      l7: { keepalive: true, healthCheckSource: 'Range100_64', allowCLBTrafficByDefault: false, inClusterDNS: 'Unmanaged' },
      revertOnDelete: true,
      probe: { enabled: false, path: '/' },
    });
  });

  it('defaults a policy without a spec', async () => {
    const r = await apply('no-spec', undefined);
    expect(r.code).toBe(0);
    expect((await stored('no-spec')).spec).toMatchObject({ mode: 'Audit', l4: { preventLoopback: 'Auto' }, l7: { keepalive: true } });
  });

  it('keeps what the user set and defaults the rest', async () => {
    const spec = {
      mode: 'Audit',
      targets: ['Ingress'],
      selector: {
        matchLabels: { 'example.com/tier': 'web', canary: '' },
        matchExpressions: [
          { key: 'app', operator: 'NotIn', values: ['db', ''] },
          { key: 'loopguard.example.com/opt-out', operator: 'DoesNotExist' },
        ],
      },
      l7: { keepalive: false, healthCheckSource: 'Unmanaged' },
    };
    const r = await apply('partial', spec);
    expect(r.stderr).toBe('');
    expect((await stored('partial')).spec).toEqual({
      ...spec,
      l4: { healthCheckSource: 'Range100_64', preventLoopback: 'Auto', sourceSwitch: 'Direct' },
      l7: { keepalive: false, healthCheckSource: 'Unmanaged', allowCLBTrafficByDefault: false, inClusterDNS: 'Unmanaged' },
      revertOnDelete: true,
      probe: { enabled: false, path: '/' },
    });
  });

  it('accepts the VIP source together with preventLoopback Never', async () => {
    const r = await apply('vip', { l4: { healthCheckSource: 'VIP', preventLoopback: 'Never' }, revertOnDelete: false });
    expect(r.code).toBe(0);
    expect((await stored('vip')).spec).toMatchObject({ l4: { healthCheckSource: 'VIP', preventLoopback: 'Never' }, revertOnDelete: false });
  });

  it('accepts the opt-in for CLB traffic by default', async () => {
    const r = await apply('pass', { targets: ['Ingress'], l7: { allowCLBTrafficByDefault: true } });
    expect(r.code).toBe(0);
    expect((await stored('pass')).spec).toMatchObject({ l7: { keepalive: true, allowCLBTrafficByDefault: true } });
  });

  it('validates updates too', async () => {
    expect((await apply('update', { mode: 'Audit' })).code).toBe(0);
    const r = await apply('update', { mode: 'Audit', l4: { healthCheckSource: 'Unmanaged' } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('l4.preventLoopback: Auto needs l4.healthCheckSource: Range100_64');
    expect((await stored('update')).spec).toMatchObject({ l4: { healthCheckSource: 'Range100_64' } });
  });

  it('ignores status sent with the main resource (status subresource)', async () => {
    const r = await apply('with-status', {}, { status: { observedGeneration: 7, counts: { total: 3 } } });
    expect(r.code).toBe(0);
    expect((await stored('with-status')).status).toBeUndefined();
  });

  it('is reachable by its short name and prints the agreed columns', async () => {
    const r = await kubectl(['get', 'lbp', '-n', ns, '-o', 'wide']);
    expect(r.code).toBe(0);
    const header = r.stdout.split('\n')[0] ?? '';
    for (const column of ['NAME', 'MODE', 'TARGETS', 'MITIGATED', 'AT RISK', 'READY', 'REASON', 'AGE']) expect(header).toContain(column);
    // The Mode column is where a user sees, right after `kubectl apply`, that a policy without mode only audits.
    expect(r.stdout).toMatch(/\bdefaults\s+Audit\b/);
  });
});
