import type { ListenerRecord, LoadBalancerRecord, RuleRecord } from './model.js';
import { isLayer7 } from './model.js';

/**
 * Records → API output (clb_models.d.ts `LoadBalancer`, `Listener`, `RuleOutput`). Fields the emulator does not
 * model are left out rather than faked; fields the real API documents as "may return null" are null where they do
 * not apply, so clients must cope with nulls as they must against the real API. Null appears nowhere else:
 * test/emulator/response-shapes.test.ts holds every response to the SDK's model interfaces.
 */

export function renderLoadBalancer(lb: LoadBalancerRecord): Record<string, unknown> {
  return {
    LoadBalancerId: lb.LoadBalancerId,
    LoadBalancerName: lb.LoadBalancerName,
    LoadBalancerType: lb.LoadBalancerType,
    Forward: lb.Forward,
    LoadBalancerVips: [...lb.LoadBalancerVips],
    Status: lb.Status,
    CreateTime: lb.CreateTime,
    ProjectId: 0,
    VpcId: lb.VpcId,
    SubnetId: lb.SubnetId,
    Tags: lb.Tags.map((t) => ({ ...t })),
    Snat: false,
    Isolation: 0,
    AddressIPVersion: lb.AddressIPVersion,
    AddressIPv6: lb.AddressIPv6,
    IPv6Mode: lb.IPv6Mode,
    LoadBalancerPassToTarget: lb.LoadBalancerPassToTarget,
    SnatPro: lb.SnatPro,
    SnatIps: [],
    AttributeFlags: lb.DeleteProtect ? ['DeleteProtect'] : [],
    ClusterIds: lb.ClusterIds.length > 0 ? [...lb.ClusterIds] : null,
    LoadBalancerDomain: '',
  };
}

export function renderRule(listener: ListenerRecord, rule: RuleRecord): Record<string, unknown> {
  return {
    LocationId: rule.LocationId,
    Domain: rule.Domain,
    Domains: [rule.Domain],
    Url: rule.Url,
    SessionExpireTime: rule.SessionExpireTime,
    HealthCheck: { ...rule.HealthCheck },
    Certificate: null,
    Scheduler: rule.Scheduler,
    ListenerId: listener.ListenerId,
    HttpGzip: true,
    BeAutoCreated: false,
    DefaultServer: rule.DefaultServer,
    Http2: false,
    ForwardType: rule.ForwardType,
    CreateTime: rule.CreateTime,
    TargetType: 'NODE',
    QuicStatus: 'QUIC_INACTIVE',
  };
}

export function renderListener(listener: ListenerRecord): Record<string, unknown> {
  const l7 = isLayer7(listener.Protocol);
  return {
    ListenerId: listener.ListenerId,
    Protocol: listener.Protocol,
    Port: listener.Port,
    Certificate: null,
    HealthCheck: l7 || !listener.HealthCheck ? null : { ...listener.HealthCheck },
    Scheduler: listener.Scheduler,
    SessionExpireTime: listener.SessionExpireTime,
    SniSwitch: 0,
    Rules: l7 ? listener.Rules.map((r) => renderRule(listener, r)) : null,
    ListenerName: listener.ListenerName,
    CreateTime: listener.CreateTime,
    EndPort: 0,
    TargetType: 'NODE',
    SessionType: listener.SessionType,
    // HTTP/HTTPS only; the model says it may be null, which is what a TCP/UDP listener has (tencent-cloud.md §9 #7).
    KeepaliveEnable: l7 ? listener.KeepaliveEnable : null,
    Toa: false,
    DeregisterTargetRst: listener.DeregisterTargetRst,
    // The listener's switched-on features. SNAT is readable only here: `Listener` has no SnatEnable field
    // (tencent-cloud.md §3), but AttrFlags lists it, as terraform-provider-tencentcloud reads it (§9 #6).
    AttrFlags: listener.SnatEnable ? ['SnatEnable'] : [],
    MaxConn: -1,
    MaxCps: -1,
    IdleConnectTimeout: listener.IdleConnectTimeout,
  };
}
