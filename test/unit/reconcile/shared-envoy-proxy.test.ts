// An EnvoyProxy reaches the Service of every Gateway it is in force for (docs/gateways.md §4), so loopguard changes it
// only if every such Gateway is selected, not opted out, and managed by the same policy, and one outside the Gateway's
// namespace (a GatewayClass's, in an admin's namespace) only for a ClusterLoopbackPolicy; otherwise Conflict /
// SharedEnvoyProxy and nothing written (plan/shared-config.ts). Other namespaces' Gateways are counted, never named.
import { describe, expect, it } from '@jest/globals';
import type { GatewayFacts } from '../../../src/model/facts.js';
import { planPolicy } from '../../../src/plan/policy-plan.js';
import { clusterOwnerKey } from '../../../src/model/record-registry.js';
import { service } from '../model/fixtures.js';
import { gathered, OWNER, snapshot } from './fixtures.js';

const CLUSTER = clusterOwnerKey('all');
const EG = 'envoy-gateway-system';
const CLASS_EP = { level: 'Class' as const, namespace: EG, name: 'tke', state: 'Found' as const, annotations: {} };

/** A Gateway of class eg in `namespace` with its own Service and CLB (IPVS, ETP Local: at risk), its EnvoyProxy `ep`. */
function gateway(namespace: string, name: string, ep: GatewayFacts['envoyProxy'] = CLASS_EP, annotations?: Record<string, string>): GatewayFacts {
  const lb = `lb-${`${namespace}${name}`.padEnd(8, '0').slice(0, 8)}`; // a CLB id: lb- and 8 letters or digits
  const svc = service({ namespace: EG, name: `envoy-${namespace}-${name}`, uid: `uid-${lb}`, externalTrafficPolicy: 'Local', generatedFor: `Gateway ${namespace}/${name}` }, { 'service.kubernetes.io/loadbalance-id': lb });
  return { kind: 'Gateway', namespace, name, className: 'eg', service: { state: 'Own', facts: svc }, loadBalancerId: lb, ...(ep ? { envoyProxy: ep } : {}), ...(annotations ? { annotations } : {}) };
}
const clbOf = (g: GatewayFacts) => ({
  loadBalancerId: g.loadBalancerId!,
  loadBalancerType: 'INTERNAL',
  addressIpVersion: 'IPV4',
  vips: ['10.0.0.10'],
  tags: { 'tke-lb-serviceuuid': `uid-${g.loadBalancerId}` },
  status: 1,
  forward: 1,
  listeners: [{ listenerId: `lbl-${g.name}`, protocol: 'TCP', port: 80, healthCheck: { sourceIpType: 0 } }],
});

const web = gateway('shop', 'web');
const rows: { name: string; owner: string; others: GatewayFacts[]; policies: Record<string, string | undefined>; rootCause: string; message?: string; writesTo?: { namespace: string; name: string } }[] = [
  {
    name: "a namespace's policy never changes its class's EnvoyProxy (another namespace's object)",
    owner: OWNER,
    others: [],
    policies: {},
    rootCause: 'SharedEnvoyProxy',
    message: `EnvoyProxy ${EG}/tke is outside this namespace (its class's) and reaches other namespaces' Gateways: only a ClusterLoopbackPolicy changes it; give this Gateway an EnvoyProxy of its own (spec.infrastructure.parametersRef; mergeType: StrategicMerge keeps its class's settings)`,
  },
  {
    name: "a cluster policy managing every Gateway of the class changes the class's EnvoyProxy",
    owner: CLUSTER,
    others: [gateway('blog', 'web')],
    policies: { web: CLUSTER },
    rootCause: 'PodSourceNotMasqueraded',
    writesTo: { namespace: EG, name: 'tke' },
  },
  {
    name: 'a Gateway of another namespace managed by another policy: counted, not named',
    owner: CLUSTER,
    others: [gateway('blog', 'api')],
    policies: { web: CLUSTER, api: 'blog/q' },
    rootCause: 'SharedEnvoyProxy',
    message: `EnvoyProxy ${EG}/tke also reaches 1 Gateway(s) in other namespaces: Envoy Gateway copies its annotations onto their Services too, so loopguard changes nothing through it. Give this Gateway an EnvoyProxy of its own (spec.infrastructure.parametersRef; mergeType: StrategicMerge keeps its class's settings), or bring the others under this policy`,
  },
  {
    name: 'a Gateway of the namespace opted out: named',
    owner: CLUSTER,
    others: [gateway('shop', 'api', CLASS_EP, { 'loopguard.dev/skip': 'true' })],
    policies: { web: CLUSTER, api: CLUSTER },
    rootCause: 'SharedEnvoyProxy',
    message: `EnvoyProxy ${EG}/tke also reaches Gateway api (opted out): Envoy Gateway copies its annotations onto their Services too, so loopguard changes nothing through it. Give this Gateway an EnvoyProxy of its own (spec.infrastructure.parametersRef; mergeType: StrategicMerge keeps its class's settings), or bring the others under this policy`,
  },
  {
    name: "its own EnvoyProxy, in its namespace, no one else's: a namespace's policy changes it",
    owner: OWNER,
    others: [gateway('shop', 'api')],
    policies: { api: undefined },
    rootCause: 'PodSourceNotMasqueraded',
    writesTo: { namespace: 'shop', name: 'web-proxy' },
  },
  {
    name: 'its own EnvoyProxy named by another Gateway of the namespace no policy selects',
    owner: OWNER,
    others: [gateway('shop', 'api', { level: 'Gateway', namespace: 'shop', name: 'web-proxy', state: 'Found', annotations: {} })],
    policies: { api: undefined },
    rootCause: 'SharedEnvoyProxy',
    message: `EnvoyProxy shop/web-proxy also reaches Gateway api (not selected by LoopbackPolicy shop/p): Envoy Gateway copies its annotations onto their Services too, so loopguard changes nothing through it. Give this Gateway an EnvoyProxy of its own (spec.infrastructure.parametersRef; mergeType: StrategicMerge keeps its class's settings), or bring the others under this policy`,
  },
];

describe('an EnvoyProxy that reaches several Gateways', () => {
  it.each(rows)('$name', (row) => {
    const self = row.name.startsWith('its own') ? gateway('shop', 'web', { level: 'Gateway', namespace: 'shop', name: 'web-proxy', state: 'Found', annotations: {} }) : web;
    const s = snapshot([gathered(self, clbOf(self) as never)], { spec: { mode: 'Enforce', targets: ['Gateway'] }, others: row.others, policies: row.policies, extra: { owner: row.owner } });
    const [t] = planPolicy(s).targets;
    expect(t?.assessment.rootCause.id).toBe(row.rootCause);
    if (row.message) expect(t?.assessment.rootCause.message).toBe(row.message);
    const annotate = t?.plan.steps.find((st) => st.kind === 'AnnotateTarget');
    expect(annotate && 'envoyProxy' in annotate ? annotate.envoyProxy : undefined).toEqual(row.writesTo);
    if (!row.writesTo) expect(t?.plan.steps).toEqual([]);
  });

  it('a Gateway whose EnvoyProxy became shared after loopguard wrote its key there: the key goes back, the sources after', () => {
    const ep = { level: 'Gateway' as const, namespace: 'shop', name: 'web-proxy', state: 'Found' as const, annotations: { 'service.cloud.tencent.com/prevent-loopback': 'true' } };
    const self = gateway('shop', 'web', ep);
    const originals = { v: 1 as const, annotations: { 'service.cloud.tencent.com/prevent-loopback': null }, envoyProxy: { namespace: 'shop', name: 'web-proxy' }, listeners: { 'lbl-web': { sourceIpType: 0 as const } }, loadBalancerId: self.loadBalancerId! };
    const recorded = { ref: { namespace: 'shop', name: 'web-proxy' }, annotations: ep.annotations };
    const s = snapshot([gathered(self, clbOf(self) as never, { ownership: { owner: OWNER, originals }, envoyProxy: recorded })], { spec: { mode: 'Enforce', targets: ['Gateway'] }, others: [gateway('shop', 'api', ep)], policies: { api: undefined } });
    const [t] = planPolicy(s).targets;
    expect(t?.assessment.rootCause.id).toBe('SharedEnvoyProxy');
    expect(t?.plan.steps[0]).toMatchObject({ kind: 'AnnotateTarget', set: { 'service.cloud.tencent.com/prevent-loopback': null }, envoyProxy: { namespace: 'shop', name: 'web-proxy' }, restore: true });
    expect(t?.plan.steps.map((st) => st.kind)).toEqual(['AnnotateTarget', 'AwaitTke']);
  });
});
