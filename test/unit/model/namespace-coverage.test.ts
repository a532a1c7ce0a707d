import { describe, expect, it } from '@jest/globals';
import { withClusterSpecDefaults, type ClusterLoopbackPolicySpec } from '../../../src/api/clusterloopbackpolicy.js';
import { coveredNamespaces, isSystemNamespace, namespaceMode, type NamespaceFacts } from '../../../src/model/namespace-coverage.js';

const ns = (name: string, labels: Record<string, string> = {}): NamespaceFacts => ({ name, labels: { 'kubernetes.io/metadata.name': name, ...labels } });
const cluster = [ns('default'), ns('kube-system'), ns('kube-public'), ns('kube-node-lease'), ns('loopguard-system'), ns('shop', { team: 'a' }), ns('blog', { team: 'b', 'loopguard.dev/enforce': 'true' }), ns('paused', { 'loopguard.dev/enforce': 'paused' })];

// Audit unless the case says otherwise (the CRD's default mode is Enforce, as the namespaced kind's).
function cover(spec: ClusterLoopbackPolicySpec, own = 'loopguard-system') {
  const c = coveredNamespaces(withClusterSpecDefaults({ mode: 'Audit', ...spec }), cluster, own);
  return { modes: Object.fromEntries(c.modes), excluded: c.excluded };
}

describe('coveredNamespaces', () => {
  it.each<[string, ClusterLoopbackPolicySpec, Record<string, string>, string[]]>([
    ['absent selector: every namespace but the system ones', {}, { default: 'Audit', shop: 'Audit', blog: 'Audit', paused: 'Audit' }, ['kube-node-lease', 'kube-public', 'kube-system', 'loopguard-system']],
    ['empty selector reads as absent', { namespaceSelector: {} }, { default: 'Audit', shop: 'Audit', blog: 'Audit', paused: 'Audit' }, ['kube-node-lease', 'kube-public', 'kube-system', 'loopguard-system']],
    ['matchLabels narrows', { namespaceSelector: { matchLabels: { team: 'a' } } }, { shop: 'Audit' }, []],
    ['Exclude wins over a selector naming kube-system', { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['kube-system', 'shop'] }] } }, { shop: 'Audit' }, ['kube-system']],
    ['Include with a selector covers kube-system', { systemNamespaces: 'Include', namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['kube-system', 'shop'] }] } }, { 'kube-system': 'Audit', shop: 'Audit' }, []],
    ['spec.mode is the default mode', { mode: 'Enforce', namespaceSelector: { matchLabels: { team: 'a' } } }, { shop: 'Enforce' }, []],
    [
      'staged rollout: first matching override wins, the rest get spec.mode',
      {
        mode: 'Audit',
        modeOverrides: [
          { mode: 'Audit', namespaceSelector: { matchLabels: { 'loopguard.dev/enforce': 'paused' } } },
          { mode: 'Enforce', namespaceSelector: { matchExpressions: [{ key: 'loopguard.dev/enforce', operator: 'Exists' }] } },
        ],
      },
      { default: 'Audit', shop: 'Audit', blog: 'Enforce', paused: 'Audit' },
      ['kube-node-lease', 'kube-public', 'kube-system', 'loopguard-system'],
    ],
    [
      'an override never adds a namespace the selector leaves out',
      { namespaceSelector: { matchLabels: { team: 'a' } }, modeOverrides: [{ mode: 'Enforce', namespaceSelector: { matchLabels: { team: 'b' } } }] },
      { shop: 'Audit' },
      [],
    ],
  ])('%s', (_name, spec, modes, excluded) => {
    expect(cover(spec)).toEqual({ modes, excluded });
  });

  it("leaves loopguard's own namespace out only when it is known", () => {
    expect(Object.keys(cover({}, '').modes)).toContain('loopguard-system');
    expect(isSystemNamespace('loopguard-system', 'loopguard-system')).toBe(true);
    expect(isSystemNamespace('default', 'loopguard-system')).toBe(false);
  });

  it('the default mode is Audit, as for a LoopbackPolicy: no namespace is enforced by omission (issue 37)', () => {
    expect(coveredNamespaces(withClusterSpecDefaults({}), [ns('shop')]).modes.get('shop')).toBe('Audit');
  });

  it('a label change moves a namespace between modes and out of the policy', () => {
    const spec = withClusterSpecDefaults({ mode: 'Audit', namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] }, modeOverrides: [{ mode: 'Enforce', namespaceSelector: { matchLabels: { 'loopguard.dev/enforce': 'true' } } }] });
    expect(coveredNamespaces(spec, [ns('shop', { team: 'a', 'loopguard.dev/enforce': 'true' })]).modes.get('shop')).toBe('Enforce');
    expect(coveredNamespaces(spec, [ns('shop', { team: 'a' })]).modes.get('shop')).toBe('Audit');
    expect(coveredNamespaces(spec, [ns('shop', { 'loopguard.dev/enforce': 'true' })]).modes.has('shop')).toBe(false);
    // Out of the policy, its releases follow the mode its labels give (§4).
    expect(namespaceMode(spec, { 'loopguard.dev/enforce': 'true' })).toBe('Enforce');
  });
});
