// Annotation keys TKE's service-controller and l7-lb-controller read or write (docs/tencent-cloud.md §1, §2).

export const SERVICE = {
  /** Read-only, written by TKE: the CLB ID the Service uses. */
  loadBalancerId: 'service.kubernetes.io/loadbalance-id',
  /** Create a private (INTERNAL) CLB in this subnet. */
  internalSubnetId: 'service.kubernetes.io/qcloud-loadbalancer-internal-subnetid',
  /** Use an existing CLB; TKE never deletes it. */
  existedLbId: 'service.kubernetes.io/tke-existed-lbid',
  /** JSON passed to CreateLoadBalancer, e.g. {"AddressIPVersion":"IPV6"}. */
  extensiveParameters: 'service.kubernetes.io/service.extensiveParameters',
  preventLoopback: 'service.cloud.tencent.com/prevent-loopback',
  /** "true"/"false": the CLB's `LoadBalancerPassToTarget` (tencent-cloud.md §9 #5). */
  passToTarget: 'service.cloud.tencent.com/pass-to-target',
  tkeServiceConfig: 'service.cloud.tencent.com/tke-service-config',
  tkeServiceConfigAuto: 'service.cloud.tencent.com/tke-service-config-auto',
} as const;

export const INGRESS = {
  ingressClass: 'kubernetes.io/ingress.class',
  /** Read-only, written by TKE: the CLB ID the Ingress uses. */
  loadBalancerId: 'kubernetes.io/ingress.qcloud-loadbalance-id',
  /** Create a private (INTERNAL) CLB in this subnet. */
  subnetId: 'kubernetes.io/ingress.subnetId',
  /** JSON passed to CreateLoadBalancer; only its `Vip` is modelled for Ingresses. */
  extensiveParameters: 'kubernetes.io/ingress.extensiveParameters',
  /** "true": rules of TLS hosts go to HTTPS, the others to HTTP; otherwise TLS moves every rule to HTTPS. */
  ruleMix: 'kubernetes.io/ingress.rule-mix',
  /** "true"/"false": the CLB's `LoadBalancerPassToTarget` (tencent-cloud.md §2 Ingress annotations). */
  passToTarget: 'ingress.cloud.tencent.com/pass-to-target',
  tkeServiceConfig: 'ingress.cloud.tencent.com/tke-service-config',
  tkeServiceConfigAuto: 'ingress.cloud.tencent.com/tke-service-config-auto',
} as const;

/** The only Ingress class TKE's l7-lb-controller serves; an Ingress without a class is treated as qcloud. */
export const QCLOUD_INGRESS_CLASS = 'qcloud';

/** Suffixes of the configs TKE generates; a hand-made config must not use them (TKE error E4051). */
export const AUTO_SERVICE_CONFIG_SUFFIX = '-auto-service-config';
export const AUTO_INGRESS_CONFIG_SUFFIX = '-auto-ingress-config';

/**
 * Finalizer that keeps a Service/Ingress until its CLB is cleaned up. The key is upstream's
 * (k8s.io/cloud-provider service controller), which TKE's service-controller descends from; that TKE uses
 * exactly this key is an assumption (sim/README.md).
 */
export const LB_CLEANUP_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';
export const INGRESS_CLEANUP_FINALIZER = 'ingress.cloud.tencent.com/load-balancer-cleanup';

/** CLB tags TKE sets (tencent-cloud.md §2 "Other useful TKE facts"): only CLBs tagged created-by are deleted. */
export const TAG_CREATED_BY = 'tke-createdBy-flag';
export const TAG_CLUSTER_ID = 'tke-clusterId';
/**
 * The object a TKE-created CLB belongs to: `tke-lb-serviceuuid: <Service uid>` (TKE doc "Service 使用已有 CLB" /
 * "多个 Service 复用相同 CLB": set on CLBs created by Services in clusters without CLB reuse, the default since
 * 2020-08-17) and `tke-lb-ingress-uuid: <Ingress uid>` (tencent-cloud.md §2, TKE doc 457/45685).
 */
export const TAG_SERVICE_UUID = 'tke-lb-serviceuuid';
export const TAG_INGRESS_UUID = 'tke-lb-ingress-uuid';

/** Event sources as TKE's controllers report them. */
export const SERVICE_CONTROLLER = 'tke-service-controller';
export const INGRESS_CONTROLLER = 'l7-lb-controller';

export function annotationIsTrue(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === 'true';
}
