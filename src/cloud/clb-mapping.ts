// SDK response shapes → the domain types of clb-client.ts. Every field the API documents as "may
// return null" is treated as absent; nothing here throws on a missing field.
import type {
  HealthCheck, Listener, LoadBalancer, LoadBalancerHealth, RuleOutput,
} from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import type {
  ListenerInfo, LoadBalancerHealthInfo, LoadBalancerInfo, RuleInfo,
} from './clb-client.js';

/**
 * The health check as it must be sent back: a copy without null/undefined fields (the API returns
 * null for fields that do not apply; sending them back is at best ignored, at worst rejected).
 */
export function cleanHealthCheck(hc: HealthCheck | null | undefined): HealthCheck | undefined {
  if (!hc) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(hc)) if (value !== null && value !== undefined) out[key] = value;
  return out as HealthCheck;
}

/**
 * Fields that exist only for HTTP(S) probes (clb_models.d.ts HealthCheck: "only for HTTP/HTTPS rules and the HTTP
 * check of a TCP listener", each "may return null"; HttpVersion only for a TCP listener's HTTP check).
 */
const HTTP_ONLY_FIELDS = ['HttpCode', 'HttpCheckPath', 'HttpCheckDomain', 'HttpCheckMethod', 'HttpVersion'] as const;
/** Checks that never probe over HTTP (a layer-4 listener's TCP, UDP's PING, CUSTOM payloads). */
const NON_HTTP_CHECKS = new Set(['TCP', 'PING', 'CUSTOM']);

/**
 * The health check as loopguard sends it back: what the CLB returned, nothing invented. Nulls go (the API's "no
 * value"), and so do HTTP-only fields on a TCP/PING/CUSTOM check even if a read carried them: they do not apply,
 * and the API may refuse them (terraform-provider-tencentcloud refuses `http_code` on such checks; the local
 * emulator does too, tencent-cloud.md §9 #7). GRPC checks are left as read: whether HttpCode applies there is undocumented.
 */
export function writableHealthCheck(hc: HealthCheck | null | undefined): HealthCheck {
  const clean: Record<string, unknown> = { ...cleanHealthCheck(hc) };
  if (typeof clean['CheckType'] === 'string' && NON_HTTP_CHECKS.has(clean['CheckType'].toUpperCase())) {
    for (const field of HTTP_ONLY_FIELDS) delete clean[field];
  }
  return clean as HealthCheck;
}

export function toLoadBalancerInfo(lb: LoadBalancer): LoadBalancerInfo {
  const addressIpVersion = lb.AddressIPVersion ?? 'IPV4';
  const tags: Record<string, string> = {};
  for (const t of lb.Tags ?? []) if (t.TagKey) tags[t.TagKey] = t.TagValue ?? '';
  return {
    loadBalancerId: lb.LoadBalancerId ?? '',
    name: lb.LoadBalancerName ?? '',
    type: lb.LoadBalancerType ?? '',
    ipVersion: /ipv6/i.test(addressIpVersion) ? 'IPv6' : 'IPv4',
    addressIpVersion,
    vips: [...(lb.LoadBalancerVips ?? [])],
    ...(lb.AddressIPv6 ? { ipv6Address: lb.AddressIPv6 } : {}),
    status: lb.Status ?? 0,
    forward: lb.Forward ?? 1,
    ...(lb.VpcId ? { vpcId: lb.VpcId } : {}),
    ...(lb.SubnetId ? { subnetId: lb.SubnetId } : {}),
    tags,
    passToTarget: lb.LoadBalancerPassToTarget === true,
    clusterIds: [...(lb.ClusterIds ?? [])],
  };
}

function toRuleInfo(rule: RuleOutput): RuleInfo {
  const healthCheck = cleanHealthCheck(rule.HealthCheck);
  return {
    locationId: rule.LocationId ?? '',
    domain: rule.Domain ?? '',
    url: rule.Url ?? '',
    ...(healthCheck ? { healthCheck } : {}),
  };
}

export function toListenerInfo(l: Listener): ListenerInfo {
  const healthCheck = cleanHealthCheck(l.HealthCheck);
  return {
    listenerId: l.ListenerId ?? '',
    name: l.ListenerName ?? '',
    protocol: l.Protocol ?? '',
    port: l.Port ?? 0,
    ...(healthCheck ? { healthCheck } : {}),
    ...(typeof l.KeepaliveEnable === 'number' ? { keepaliveEnable: l.KeepaliveEnable } : {}),
    rules: (l.Rules ?? []).map(toRuleInfo),
  };
}

export function toLoadBalancerHealthInfo(lb: LoadBalancerHealth): LoadBalancerHealthInfo {
  return {
    loadBalancerId: lb.LoadBalancerId ?? '',
    listeners: (lb.Listeners ?? []).map((l) => ({
      listenerId: l.ListenerId ?? '',
      protocol: l.Protocol ?? '',
      port: l.Port ?? 0,
      rules: (l.Rules ?? []).map((r) => ({
        locationId: r.LocationId ?? '',
        ...(r.Domain ? { domain: r.Domain } : {}),
        ...(r.Url ? { url: r.Url } : {}),
        targets: (r.Targets ?? []).map((t) => ({
          ip: t.IP ?? '',
          port: t.Port ?? 0,
          healthy: t.HealthStatus === true,
          // HealthStatusDetial is the deprecated misspelling older responses carry.
          status: t.HealthStatusDetail ?? t.HealthStatusDetial ?? (t.HealthStatus ? 'Alive' : 'Unknown'),
          ...(t.TargetId ? { targetId: t.TargetId } : {}),
          ...(typeof t.Weight === 'number' ? { weight: t.Weight } : {}),
        })),
      })),
    })),
  };
}
