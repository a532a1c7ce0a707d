// L4 assessment: a LoadBalancer Service and its CLB's TCP/UDP listeners (docs/diagnosis.md §1, §5): facts → situation
// (the three questions of §5) → plan → root cause; cause-text.ts writes the message.
import { ServiceAnnotation, readBool } from '../api/annotations.js';
import type { AssessmentContext, Blocker, Mitigation } from './assessment-result.js';
import { clbGate, isIpv6, skipGate, type Decision } from './assess-common.js';
import type { BoundBy, L4Cause, L4PlanSummary, L4Rule, L4Scene, LoopFactor } from './cause.js';
import { rangeRejectedText } from './cause-text.js';
import { sourceIpTypeOf, type Change, type L4DesiredState } from './desired-state.js';
import { allDead, L7_PROTOCOLS, type ClbFacts, type ListenerFacts, type ServiceFacts } from './facts.js';
import type { ClusterProfile } from './cluster-profile.js';
import { verdictOf } from './root-causes.js';

type Tri = 'yes' | 'no' | 'unknown';

/** The L4 listener protocols that serve a Service port's protocol. */
const COMPATIBLE: Record<string, ReadonlySet<string>> = {
  TCP: new Set(['TCP', 'TCP_SSL']),
  UDP: new Set(['UDP', 'QUIC']),
};

/** The L4 listeners that serve the Service's ports (TKE creates one per Service port, on that port). */
export function matchServiceListeners(svc: ServiceFacts, clb: ClbFacts) {
  const result = { matched: [] as ListenerFacts[], missing: [] as string[], servedByL7: [] as string[], unsupported: [] as string[] };
  for (const p of svc.ports) {
    const label = `${p.port}/${p.protocol}`;
    const compatible = COMPATIBLE[p.protocol];
    if (!compatible) {
      result.unsupported.push(label);
      continue;
    }
    const l4 = clb.listeners.find((l) => l.port === p.port && compatible.has(l.protocol));
    if (l4) {
      if (!result.matched.includes(l4)) result.matched.push(l4);
      continue;
    }
    const l7 = clb.listeners.find((l) => l.port === p.port && L7_PROTOCOLS.has(l.protocol));
    if (l7) result.servedByL7.push(`${label} (${l7.protocol} listener ${l7.listenerId})`);
    else result.missing.push(label);
  }
  return result;
}

/** The gates (docs/diagnosis.md §4), then the L4 rules: the Service's root cause and plan, no prose. */
export function decideService(svc: ServiceFacts, ctx: AssessmentContext): Decision {
  const { warnings, cause: skipped } = skipGate(svc, ctx);
  if (skipped) return { cause: skipped, warnings };
  if (svc.generatedFor) return { cause: { id: 'EnvoyGatewayService', generatedFor: svc.generatedFor }, warnings };
  if (svc.type !== 'LoadBalancer') return { cause: { id: 'NotLoadBalancerService', type: svc.type }, warnings };
  if (svc.loadBalancerClass) return { cause: { id: 'NotTkeLoadBalancer', loadBalancerClass: svc.loadBalancerClass }, warnings };
  const gate = clbGate(svc, ctx.clb);
  if ('cause' in gate) return { cause: gate.cause, warnings };
  const listeners = matchServiceListeners(svc, gate.clb);
  if (listeners.unsupported.length > 0) warnings.push(`ports ${listeners.unsupported.join(', ')}: protocol not served by CLB, ignored`);
  if (listeners.missing.length > 0) return { cause: { id: 'ListenersNotReady', lb: gate.clb.loadBalancerId, missing: listeners.missing }, warnings };

  const s = situation(svc, gate.clb, listeners, ctx.profile);
  // L4-0 (KEP-1860): kube-proxy, in every mode, neither answers nor binds an address whose ipMode is Proxy, so calls
  // always reach the CLB; prevent-loopback cannot bind it either. TKE does not set it.
  if (!s.at.public && (svc.ipModes ?? []).includes('Proxy')) return { cause: { layer: 'L4', at: s.at, id: 'IpModeProxy' }, warnings };
  const p = plan(s, ctx);
  const cause = l4Cause(s, p, ctx);
  const mitigations: Mitigation[] = [
    ...(s.at.listeners.length > 0 && s.at.vipSourced.length === 0 ? (['HealthCheckSourceRange100_64'] as const) : []),
    ...(s.annotationPresent ? (['PreventLoopbackAnnotation'] as const) : []),
  ];
  // IPv6: nothing loopguard may do, so no plan.
  return { cause, warnings, mitigations, ...(cause.id === 'Ipv6Clb' ? {} : { plan: p.decided }) };
}

/** The answers docs/diagnosis.md §5 asks of a Service, and what its messages name. */
interface Situation {
  at: L4Scene;
  ipv6: boolean;
  annotationPresent: boolean;
  localMode: boolean;
  loopFactor: LoopFactor | undefined;
  /** Is the VIP bound on the nodes: by what when it is. */
  bound: BoundBy | 'no' | 'unknown';
  hcDrop: Tri;
  loopRisk: Tri;
}

const LOCAL_MODES: ReadonlySet<string> = new Set(['iptables', 'nftables', 'none']);

function situation(svc: ServiceFacts, clb: ClbFacts, listeners: ReturnType<typeof matchServiceListeners>, profile: ClusterProfile): Situation {
  const annotation = readBool(svc.annotations, ServiceAnnotation.PreventLoopback);
  const directAccess = readBool(svc.annotations, ServiceAnnotation.DirectAccess);
  const annotationPresent = annotation.kind === 'value' && annotation.value;
  const vipSourced = listeners.matched.filter((l) => sourceIpTypeOf(l.healthCheck?.sourceIpType) === 0);
  const localMode = LOCAL_MODES.has(profile.kubeProxyMode);
  const loopFactor: LoopFactor | undefined =
    directAccess.kind === 'value' && directAccess.value ? 'DirectAccessSameNode' : svc.externalTrafficPolicy === 'Local' ? 'PodSourceNotMasqueraded' : undefined;
  const bound = vipBinding(profile, annotationPresent, vipSourced.filter(allDead));
  const vipBound: Tri = typeof bound === 'object' ? 'yes' : bound;
  const reachesClb: Tri = localMode || vipBound === 'yes' ? 'no' : vipBound === 'no' && profile.kubeProxyMode === 'ipvs' ? 'yes' : 'unknown';
  const vip = clb.vips?.[0] ?? svc.loadBalancerIps?.[0] ?? 'the CLB VIP';
  const at: L4Scene = { lb: clb.loadBalancerId, public: clb.loadBalancerType === 'OPEN', vip, profile, listeners: listeners.matched, vipSourced, servedByL7: listeners.servedByL7 };
  const hcDrop = vipSourced.length === 0 ? 'no' : vipBound;
  return { at, ipv6: isIpv6(clb), annotationPresent, localMode, loopFactor, bound, hcDrop, loopRisk: loopFactor === undefined ? 'no' : reachesClb };
}

/** Is the VIP bound on the nodes (docs/diagnosis.md §5 "Is the VIP bound"), and by what. */
function vipBinding(profile: ClusterProfile, annotationPresent: boolean, dead: readonly ListenerFacts[]): BoundBy | 'no' | 'unknown' {
  if (LOCAL_MODES.has(profile.kubeProxyMode)) return 'no';
  if (profile.vipBinding === 'Always') return { by: 'Upstream' };
  if (profile.vipBinding === 'OnAnnotation' && annotationPresent) return { by: 'Annotation' };
  // Evidence overrides a no or an unknown: every backend of a VIP-sourced listener Dead (IMROC-CASE).
  if (dead.length > 0) return { by: 'DeadBackends', listenerIds: dead.map((l) => l.listenerId) };
  // Unknown binding: TKE builds bind only for the annotation, so without it the VIP is taken as unbound.
  return profile.vipBinding === 'Unknown' && annotationPresent ? 'unknown' : 'no';
}

type Plan = ReturnType<typeof plan>;

/** The L4 desired state (docs/diagnosis.md "L4 desired state"): sources first, then the annotation. */
function plan(s: Situation, ctx: AssessmentContext) {
  const { l4 } = ctx.policy;
  const { profile } = ctx;
  const modeCanBind = profile.kubeProxyMode === 'ipvs' || profile.kubeProxyMode === 'unknown';
  const bindingAllows = profile.vipBinding === 'OnAnnotation' || (l4.preventLoopback === 'Always' && (profile.vipBinding === 'Never' || profile.vipBinding === 'Unknown'));
  const want =
    !s.at.public && !s.ipv6 && modeCanBind && s.loopFactor !== undefined && l4.healthCheckSource === 'Range100_64' && l4.preventLoopback !== 'Never' && bindingAllows;
  const sourceNeeded = l4.healthCheckSource === 'Range100_64' && !s.ipv6 && (want || s.bound !== 'no');
  // The CLB error that proved the 100.64.0.0/10 source missing, when the plan needs it.
  const rejected = sourceNeeded && s.at.vipSourced.length > 0 ? ctx.capabilities?.range100_64Rejected : undefined;
  const blocked = rejected !== undefined;
  const blockers: Blocker[] = blocked ? [{ reason: 'HealthCheckSourceCapabilityMissing', message: rangeRejectedText(s.at.lb, rejected, 'L4') }] : [];
  const switches: Change[] =
    sourceNeeded && !blocked
      ? s.at.vipSourced.map((l) => ({ action: 'SetListenerHealthCheckSource', listenerId: l.listenerId, protocol: l.protocol, port: l.port, from: 0, to: 1 }))
      : [];
  const annotate = want && !blocked && !s.annotationPresent;
  // The annotation only after every source is off the VIP (docs/architecture.md §5 "Order matters").
  const changes: Change[] = [...switches, ...(annotate ? [{ action: 'AddPreventLoopbackAnnotation' as const }] : [])];
  // TKE answers prevent-loopback by switching the sources itself (tencent-cloud.md §9 #1): where the Service already
  // asks TKE, or the policy has loopguard ask it first, TKE gets its grace period before loopguard writes.
  const sourceBy = !s.ipv6 && !blocked && (s.annotationPresent || (l4.sourceSwitch === 'TKEFirst' && want)) ? 'TKE' : 'loopguard';
  const desired: L4DesiredState = {
    layer: 'L4',
    loadBalancerId: s.at.lb,
    listeners: s.at.listeners.map((l) => ({
      listenerId: l.listenerId,
      protocol: l.protocol,
      port: l.port,
      currentSourceIpType: sourceIpTypeOf(l.healthCheck?.sourceIpType),
      ...(sourceNeeded ? { desiredSourceIpType: 1 as const } : {}),
    })),
    // With the source switch blocked, loopguard's own annotation would make kube-proxy bind the VIP the checks still
    // come from (every backend dead): not wanted, and given back if loopguard added it (TKEFirst asks first).
    preventLoopback: { present: s.annotationPresent, desired: want && !blocked },
    sourceBy,
    sourceSwitch: l4.sourceSwitch,
  };
  const summary: L4PlanSummary = { ...(switches.length > 0 ? { switchBy: sourceBy } : {}), annotate };
  return { decided: { desired, changes, blockers }, summary, sourceNeeded, rejected };
}

/** The root cause: the rules L4-1 … L4-11 in order, then the overrides L4-13 (capability) and L4-12 (IPv6). */
function l4Cause(s: Situation, p: Plan, ctx: AssessmentContext): L4Cause {
  const rule = l4Rule(s, p, ctx);
  const base = { layer: 'L4' as const, at: s.at };
  const atRisk = verdictOf(rule.id) === 'AtRisk';
  if (p.rejected !== undefined && atRisk && rule.id !== 'VipHealthCheckDropped') {
    return { ...base, id: 'HealthCheckSourceCapabilityMissing', risk: rule, rejected: p.rejected };
  }
  if (s.ipv6 && atRisk) return { ...base, id: 'Ipv6Clb', risk: rule, annotationPresent: s.annotationPresent };
  return { ...base, ...rule };
}

function l4Rule(s: Situation, p: Plan, ctx: AssessmentContext): L4Rule {
  const { l4 } = ctx.policy;
  const { profile } = ctx;
  const plan = p.summary;
  if (s.hcDrop === 'yes' && typeof s.bound === 'object') {
    return { id: 'VipHealthCheckDropped', boundBy: s.bound, fix: s.ipv6 ? 'Ipv6' : p.rejected !== undefined ? 'Blocked' : p.sourceNeeded ? 'Planned' : 'PolicyForbids' };
  }
  if (s.at.public) return { id: 'PublicClb' };
  const factor = s.loopFactor;
  if (s.loopRisk === 'yes' && factor) {
    if (l4.preventLoopback === 'Never' || l4.healthCheckSource !== 'Range100_64') return { id: 'MitigationDisabledByPolicy', factor, l4 };
    if (profile.vipBinding === 'OnAnnotation') return { id: factor, plan };
    if (profile.vipBinding === 'Never') return { id: 'KubeProxyTooOld', factor, always: l4.preventLoopback === 'Always', plan };
    return { id: 'KubeProxyVersionUnknown', factor, plan };
  }
  if (s.loopRisk === 'unknown' || s.hcDrop === 'unknown') {
    const open = { ...(s.loopRisk === 'unknown' && factor ? { loop: factor } : {}), drop: s.hcDrop === 'unknown' };
    return { id: profile.kubeProxyMode === 'unknown' ? 'KubeProxyModeUnknown' : 'KubeProxyVersionUnknown', open, plan };
  }
  if (typeof s.bound === 'object') return { id: 'LoopbackPrevented', boundBy: s.bound };
  return { id: s.localMode ? 'VipServedLocally' : 'MasqueradedToNodeIp' };
}
