// Admission of LoopbackPolicy through a real kube-apiserver, as a user meets it: `kubectl apply -f -`.
// Invalid specs must be rejected with a message that says what is wrong; valid ones are accepted and
// defaulted by the CRD's schema (crds/loopguard.dev_loopbackpolicies.yaml).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createNamespace, deleteNamespace, kubectl } from '../support/kube.js';
import { applyPolicy, getPolicy, policyManifest } from '../support/policy.js';

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

// [case, spec, fragments the stderr must contain]
const invalid: [string, unknown, string[]][] = [
  ['mode in lower case', { mode: 'enforce' }, ['spec.mode', 'Unsupported value: "enforce"', '"Enforce", "Audit"']],
  ['mode empty', { mode: '' }, ['spec.mode', 'Unsupported value: ""']],
  ['mode not a string', { mode: 1 }, ['spec.mode', 'must be of type string']],
  ['misspelt field', { modee: 'Audit' }, ['unknown field "spec.modee"']],
  ['targets empty', { targets: [] }, ['spec.targets', 'should have at least 1 items']],
  ['targets duplicated', { targets: ['Service', 'Service'] }, ['spec.targets[1]', 'Duplicate value: "Service"']],
  ['targets with an unknown kind', { targets: ['Pod'] }, ['spec.targets[0]', 'Unsupported value: "Pod"', '"Service", "Ingress"']],
  ['targets with three entries', { targets: ['Service', 'Ingress', 'Ingress'] }, ['spec.targets', 'must have at most 2 items']],
  ['targets as a string', { targets: 'Service' }, ['spec.targets', 'must be of type array']],
  ['l4 as a string', { l4: 'Range100_64' }, ['spec.l4', 'must be of type object']],
  ['l4.healthCheckSource misspelt', { l4: { healthCheckSource: 'Range100-64' } }, ['spec.l4.healthCheckSource', 'Unsupported value: "Range100-64"']],
  ['l4.preventLoopback in lower case', { l4: { preventLoopback: 'always' } }, ['spec.l4.preventLoopback', 'Unsupported value: "always"']],
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
  ['operator missing', { selector: { matchExpressions: [{ key: 'app' }] } }, ['spec.selector.matchExpressions[0].operator', 'Required value']],
  ['key missing', { selector: { matchExpressions: [{ operator: 'Exists' }] } }, ['spec.selector.matchExpressions[0].key', 'Required value']],
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
];

describe('LoopbackPolicy admission', () => {
  it('has at least 30 invalid cases', () => {
    expect(invalid.length).toBeGreaterThanOrEqual(30);
  });

  it.each(invalid.map(([name, spec, fragments], i) => [name, i, spec, fragments] as const))(
    'rejects: %s',
    async (_name, i, spec, fragments) => {
      const r = await apply(`invalid-${i}`, spec);
      expect(r.code).not.toBe(0);
      for (const f of fragments) expect(r.stderr).toContain(f);
    },
  );

  it('stored none of the invalid policies', async () => {
    const r = await kubectl(['get', 'lbp', '-n', ns, '-o', 'name']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/invalid-/);
  });

  it('accepts an empty spec and fills in every default', async () => {
    const r = await apply('defaults', {});
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await stored('defaults')).spec).toEqual({
      mode: 'Enforce',
      targets: ['Service', 'Ingress'],
      l4: { healthCheckSource: 'Range100_64', preventLoopback: 'Auto' },
      l7: { keepalive: true, healthCheckSource: 'Range100_64', allowCLBTrafficByDefault: false },
      revertOnDelete: true,
    });
  });

  it('defaults a policy without a spec', async () => {
    const r = await apply('no-spec', undefined);
    expect(r.code).toBe(0);
    expect((await stored('no-spec')).spec).toMatchObject({ mode: 'Enforce', l4: { preventLoopback: 'Auto' }, l7: { keepalive: true } });
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
      l4: { healthCheckSource: 'Range100_64', preventLoopback: 'Auto' },
      l7: { keepalive: false, healthCheckSource: 'Unmanaged', allowCLBTrafficByDefault: false },
      revertOnDelete: true,
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
    expect(r.stdout).toMatch(/\bdefaults\s+Enforce\b/);
  });
});
