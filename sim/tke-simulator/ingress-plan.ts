// What TKE's l7-lb-controller would build for an Ingress (docs/tencent-cloud.md §2, Ingress annotations).
// Pure: an Ingress in, a plan out.
import type { V1Ingress } from '@kubernetes/client-node';
import { INGRESS, QCLOUD_INGRESS_CLASS, TAG_INGRESS_UUID, annotationIsTrue } from './annotations.js';
import { extensiveParametersFrom, type LoadBalancerPlan } from './service-plan.js';

export interface L7RulePlan {
  /** Ingress host; undefined = no host, so the rule lives on the CLB's default domain (its VIP). */
  host?: string;
  url: string;
}

export interface L7ListenerPlan {
  protocol: 'HTTP' | 'HTTPS';
  port: number;
  rules: L7RulePlan[];
}

export interface IngressPlan {
  loadBalancer: LoadBalancerPlan;
  listeners: L7ListenerPlan[];
  /** Annotation problems TKE would report as Warning Events; the plan is still usable. */
  problems: string[];
}

/**
 * TKE serves `kubernetes.io/ingress.class: qcloud`, and treats an Ingress without a class as qcloud (newest
 * annotation doc). `spec.ingressClassName` is honoured the same way when the annotation is absent (assumption).
 */
export function isQcloudIngress(ing: V1Ingress): boolean {
  const cls = ing.metadata?.annotations?.[INGRESS.ingressClass] ?? ing.spec?.ingressClassName;
  return cls === undefined || cls.trim() === '' || cls.trim() === QCLOUD_INGRESS_CLASS;
}

export function isManagedIngress(ing: V1Ingress): boolean {
  return isQcloudIngress(ing) && !ing.metadata?.deletionTimestamp;
}

const ruleKey = (r: L7RulePlan): string => `${r.host ?? ''}\u0000${r.url}`;

/**
 * Rules go to HTTP:80, or to HTTPS:443 when TLS covers them. Without `kubernetes.io/ingress.rule-mix: "true"`
 * any TLS section moves every rule to HTTPS; with it, only rules whose host is listed in `spec.tls[].hosts`
 * (or all, for a TLS entry without hosts) do. HTTP:80 always exists, as in the TKE-generated config of
 * tencent-cloud.md §1 (live export: an HTTP:80 listener with no domains next to HTTPS:443). Certificates are not modelled.
 */
export function planIngress(ing: V1Ingress, clusterId: string): IngressPlan {
  const annotations = ing.metadata?.annotations ?? {};
  const subnetId = annotations[INGRESS.subnetId]?.trim() || undefined;
  // Only the chosen VIP: an IPv6 Ingress is not modelled (its AddressIPVersion is ignored, as before).
  const { vip, problem } = extensiveParametersFrom(annotations[INGRESS.extensiveParameters], INGRESS.extensiveParameters);
  const tls = ing.spec?.tls ?? [];
  const ruleMix = annotationIsTrue(annotations[INGRESS.ruleMix]);
  const tlsAll = tls.some((t) => (t.hosts ?? []).length === 0);
  const tlsHosts = new Set(tls.flatMap((t) => t.hosts ?? []).map((h) => h.toLowerCase()));
  const onHttps = (host: string | undefined): boolean =>
    tls.length > 0 && (!ruleMix || tlsAll || (host !== undefined && tlsHosts.has(host.toLowerCase())));

  const http: L7RulePlan[] = [];
  const https: L7RulePlan[] = [];
  const seen = new Set<string>();
  for (const rule of ing.spec?.rules ?? []) {
    const host = rule.host?.trim().toLowerCase() || undefined;
    for (const path of rule.http?.paths ?? []) {
      const plan: L7RulePlan = { ...(host ? { host } : {}), url: path.path?.trim() || '/' };
      const target = onHttps(host) ? https : http;
      const key = `${target === https ? 'S' : 'P'}${ruleKey(plan)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      target.push(plan);
    }
  }
  const listeners: L7ListenerPlan[] = [{ protocol: 'HTTP', port: 80, rules: http }];
  if (tls.length > 0) listeners.push({ protocol: 'HTTPS', port: 443, rules: https });
  return {
    loadBalancer: {
      type: subnetId ? 'INTERNAL' : 'OPEN',
      ...(subnetId ? { subnetId } : {}),
      addressIpVersion: 'IPV4',
      ...(vip !== undefined ? { vip } : {}),
      name: `${clusterId}_${ing.metadata?.namespace ?? ''}_${ing.metadata?.name ?? ''}`.slice(0, 60),
      ...(ing.metadata?.uid ? { ownerTag: { key: TAG_INGRESS_UUID, value: ing.metadata.uid } } : {}),
    },
    listeners,
    problems: problem ? [problem] : [],
  };
}
