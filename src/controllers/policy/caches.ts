// The policy controller's view of the informer caches (deps.ts PolicyCaches): typed reads.
import type { KubernetesObject, V1Ingress, V1Namespace, V1Service } from '@kubernetes/client-node';
import type { ClusterLoopbackPolicy } from '../../api/clusterloopbackpolicy.js';
import type { LoopbackPolicy } from '../../api/loopbackpolicy.js';
import { recordName, type LoopbackRecord } from '../../api/loopbackrecord.js';
import type { NamespaceFacts } from '../../model/namespace-coverage.js';
import type { EnvoyProxyObject, GatewayClassObject, GatewayObject } from '../../model/target-facts.js';
import type { ResilientInformer } from '../../runtime/informer.js';
import type { PolicyCaches } from './deps.js';

/** The informers (operator.ts): the built-in kinds typed, the custom and optional ones as they come. */
export type PolicyInformers = Record<'policies' | 'clusterPolicies' | 'records' | 'gateways' | 'envoyProxies' | 'gatewayClasses', ResilientInformer<KubernetesObject>> & {
  services: ResilientInformer<V1Service>;
  ingresses: ResilientInformer<V1Ingress>;
  namespaces: ResilientInformer<V1Namespace>;
};

export function namespaceFacts(n: V1Namespace): NamespaceFacts {
  return { name: n.metadata?.name ?? '', ...(n.metadata?.labels ? { labels: n.metadata.labels } : {}) };
}

/** `ownNamespace`: loopguard's own namespace, which a cluster policy leaves out by default. */
export function informerCaches(i: PolicyInformers, ownNamespace: string, envoyGatewayNamespace?: string): PolicyCaches {
  return {
    policy: (ns, name) => i.policies.get(name, ns) as LoopbackPolicy | undefined,
    policies: (ns?) => i.policies.list(ns) as readonly LoopbackPolicy[],
    services: (ns?) => i.services.list(ns),
    ingresses: (ns?) => i.ingresses.list(ns),
    gateways: (ns?) => i.gateways.list(ns) as readonly GatewayObject[],
    envoyProxy: (ns, name) => i.envoyProxies.get(name, ns) as EnvoyProxyObject | undefined,
    gatewayClass: (name) => i.gatewayClasses.get(name) as GatewayClassObject | undefined,
    record: (t) => i.records.get(recordName(t)) as unknown as LoopbackRecord | undefined,
    records: (ns?) => (i.records.list() as unknown as readonly LoopbackRecord[]).filter((r) => ns === undefined || r.spec?.target?.namespace === ns),
    clusterPolicy: (name) => i.clusterPolicies.get(name) as unknown as ClusterLoopbackPolicy | undefined,
    clusterPolicies: () => i.clusterPolicies.list() as unknown as readonly ClusterLoopbackPolicy[],
    namespace: (name) => {
      const n = i.namespaces.get(name);
      return n ? namespaceFacts(n) : undefined;
    },
    namespaces: () => i.namespaces.list().map(namespaceFacts),
    ownNamespace,
    ...(envoyGatewayNamespace ? { envoyGatewayNamespace } : {}),
  };
}
