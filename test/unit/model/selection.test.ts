import { describe, expect, it } from '@jest/globals';
import { withSpecDefaults, type LabelSelector, type LoopbackPolicySpec } from '../../../src/api/loopbackpolicy.js';
import { matchesSelector, selects, type SelectableTarget } from '../../../src/model/selection.js';

const labels = { app: 'web', tier: 'front', 'example.com/team': 'shop' };

describe('matchesSelector', () => {
  it.each<[string, LabelSelector | undefined, Record<string, string> | undefined, boolean]>([
    ['absent selector selects all', undefined, labels, true],
    ['empty selector selects all', {}, labels, true],
    ['empty selector selects unlabelled objects', {}, undefined, true],
    ['matchLabels match', { matchLabels: { app: 'web' } }, labels, true],
    ['matchLabels all must match', { matchLabels: { app: 'web', tier: 'back' } }, labels, false],
    ['matchLabels with a prefixed key', { matchLabels: { 'example.com/team': 'shop' } }, labels, true],
    ['matchLabels on an unlabelled object', { matchLabels: { app: 'web' } }, undefined, false],
    ['matchLabels empty value matches an empty label', { matchLabels: { canary: '' } }, { canary: '' }, true],
    ['matchLabels empty value needs the label', { matchLabels: { canary: '' } }, {}, false],
    ['In matches', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'edge'] }] }, labels, true],
    ['In misses', { matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] }, labels, false],
    ['In with the key absent', { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }, labels, false],
    ['In without values matches nothing', { matchExpressions: [{ key: 'tier', operator: 'In', values: [] }] }, labels, false],
    ['NotIn excludes', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }, labels, false],
    ['NotIn passes other values', { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['back'] }] }, labels, true],
    ['NotIn passes when the key is absent', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, labels, true],
    ['Exists', { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, labels, true],
    ['Exists misses', { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, labels, false],
    ['DoesNotExist', { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, labels, true],
    ['DoesNotExist misses', { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, labels, false],
    [
      'matchLabels AND matchExpressions',
      { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] },
      labels,
      false,
    ],
    [
      'every expression must match',
      {
        matchExpressions: [
          { key: 'app', operator: 'Exists' },
          { key: 'tier', operator: 'NotIn', values: ['back'] },
          { key: 'zone', operator: 'DoesNotExist' },
        ],
      },
      labels,
      true,
    ],
    ['unknown operator selects nothing', { matchExpressions: [{ key: 'app', operator: 'Bogus' as never }] }, labels, false],
    ['inherited properties are not labels', { matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, {}, false],
  ])('%s', (_name, selector, l, expected) => {
    expect(matchesSelector(selector, l)).toBe(expected);
  });
});

describe('selects', () => {
  const candidates: SelectableTarget[] = [
    { kind: 'Service', namespace: 'shop', name: 'web', labels: { app: 'web' } },
    { kind: 'Ingress', namespace: 'shop', name: 'front', labels: { app: 'web' } },
    { kind: 'Service', namespace: 'shop', name: 'db', labels: { app: 'db' } },
    { kind: 'Service', namespace: 'other', name: 'web', labels: { app: 'web' } },
  ];
  const policy = (spec: LoopbackPolicySpec) => ({ namespace: 'shop', spec: withSpecDefaults(spec) });
  const names = (xs: SelectableTarget[]) => xs.map((x) => `${x.kind}/${x.namespace}/${x.name}`);
  const selectTargets = (p: ReturnType<typeof policy>, xs: SelectableTarget[]) => xs.filter((x) => selects(p, x));

  it('selects every Service and Ingress in its namespace by default', () => {
    expect(names(selectTargets(policy({}), candidates))).toEqual(['Service/shop/web', 'Ingress/shop/front', 'Service/shop/db']);
  });
  it('honours spec.targets', () => {
    expect(names(selectTargets(policy({ targets: ['Ingress'] }), candidates))).toEqual(['Ingress/shop/front']);
  });
  it('combines kind and selector', () => {
    expect(names(selectTargets(policy({ targets: ['Service'], selector: { matchLabels: { app: 'web' } } }), candidates))).toEqual(['Service/shop/web']);
  });
  it('never crosses namespaces', () => {
    expect(selects(policy({}), { kind: 'Service', namespace: 'other', name: 'web' })).toBe(false);
  });
});
