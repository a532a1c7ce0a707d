// What TKE's service-controller would build for a Service (docs/tencent-cloud.md §2, Service annotations).
// Pure: a Service in, a plan out; no API calls.
import type { V1Service } from '@kubernetes/client-node';
import { SERVICE, TAG_SERVICE_UUID, annotationIsTrue } from './annotations.js';

export type LoadBalancerType = 'OPEN' | 'INTERNAL';
/** `AddressIPVersion` values TKE passes to CreateLoadBalancer (tencent-cloud.md §3, HealthCheck paragraph). */
export type AddressIpVersion = 'IPV4' | 'IPV6' | 'IPv6FullChain';

export interface LoadBalancerPlan {
  type: LoadBalancerType;
  subnetId?: string;
  addressIpVersion: AddressIpVersion;
  /** The private VIP asked for (`Vip` in extensiveParameters); absent: CLB assigns one. */
  vip?: string;
  /** Set when the user brought the CLB (`tke-existed-lbid`): never created or deleted by us. */
  existingId?: string;
  /** A readable CLB name; TKE's real naming scheme is unknown and nothing depends on it. */
  name: string;
  /** The owner tag TKE puts on a CLB it creates for this object (`tke-lb-serviceuuid` / `tke-lb-ingress-uuid`). */
  ownerTag?: { key: string; value: string };
}

export interface L4ListenerPlan {
  protocol: 'TCP' | 'UDP';
  port: number;
}

export interface ServicePlan {
  loadBalancer: LoadBalancerPlan;
  listeners: L4ListenerPlan[];
  preventLoopback: boolean;
  /** Annotation problems TKE would report as Warning Events; the plan is still usable. */
  problems: string[];
}

export function isLoadBalancerService(svc: V1Service): boolean {
  return svc.spec?.type === 'LoadBalancer' && !svc.metadata?.deletionTimestamp;
}

/**
 * `service.kubernetes.io/service.extensiveParameters` is JSON passed to CreateLoadBalancer. Only
 * `AddressIPVersion` and `Vip` (a chosen VIP, CreateLoadBalancer's own parameter) are modelled; other keys are
 * ignored (sim/README.md).
 */
export function extensiveParametersFrom(extensive: string | undefined, key: string = SERVICE.extensiveParameters): { version: AddressIpVersion; vip?: string; problem?: string } {
  if (!extensive?.trim()) return { version: 'IPV4' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(extensive);
  } catch (err) {
    return { version: 'IPV4', problem: `${key} is not valid JSON: ${(err as Error).message}` };
  }
  const fields = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  const vip = fields['Vip'];
  if (vip !== undefined && typeof vip !== 'string') return { version: 'IPV4', problem: `${key}: Vip must be a string, got ${JSON.stringify(vip)}` };
  const withVip = vip !== undefined ? { vip } : {};
  const raw = fields['AddressIPVersion'];
  if (raw === undefined) return { version: 'IPV4', ...withVip };
  const value = String(raw).toUpperCase();
  if (value === 'IPV4') return { version: 'IPV4', ...withVip };
  if (value === 'IPV6') return { version: 'IPV6', ...withVip };
  if (value === 'IPV6FULLCHAIN') return { version: 'IPv6FullChain', ...withVip };
  return { version: 'IPV4', problem: `${key}: unsupported AddressIPVersion ${JSON.stringify(raw)}` };
}

export function isIpv6(version: AddressIpVersion): boolean {
  return version !== 'IPV4';
}

/** One listener per distinct (protocol, port); SCTP has no CLB listener and is skipped. */
export function listenersFor(svc: V1Service): L4ListenerPlan[] {
  const seen = new Set<string>();
  const out: L4ListenerPlan[] = [];
  for (const p of svc.spec?.ports ?? []) {
    const protocol = (p.protocol ?? 'TCP').toUpperCase();
    if (protocol !== 'TCP' && protocol !== 'UDP') continue;
    const key = `${protocol}/${p.port}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ protocol, port: p.port });
  }
  return out.sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol));
}

export function planService(svc: V1Service, clusterId: string): ServicePlan {
  const annotations = svc.metadata?.annotations ?? {};
  const problems: string[] = [];
  const subnetId = annotations[SERVICE.internalSubnetId]?.trim() || undefined;
  const { version, vip, problem } = extensiveParametersFrom(annotations[SERVICE.extensiveParameters]);
  if (problem) problems.push(problem);
  const existingId = annotations[SERVICE.existedLbId]?.trim() || undefined;
  return {
    loadBalancer: {
      type: subnetId ? 'INTERNAL' : 'OPEN',
      ...(subnetId ? { subnetId } : {}),
      addressIpVersion: version,
      ...(vip !== undefined ? { vip } : {}),
      ...(existingId ? { existingId } : {}),
      name: `${clusterId}_${svc.metadata?.namespace ?? ''}_${svc.metadata?.name ?? ''}`.slice(0, 60),
      ...(svc.metadata?.uid ? { ownerTag: { key: TAG_SERVICE_UUID, value: svc.metadata.uid } } : {}),
    },
    listeners: listenersFor(svc),
    preventLoopback: annotationIsTrue(annotations[SERVICE.preventLoopback]),
    problems,
  };
}
