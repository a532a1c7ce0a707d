// L4 assessment: a LoadBalancer Service and its CLB's TCP/UDP listeners. Two independent faults:
//  1. Health-check drop: when kube-proxy binds the CLB VIP to kube-ipvs0, probes whose source is the VIP
//     arrive with a local source address and are dropped; every backend looks dead (TKE-CN/IMROC-CASE/TKE-LOOPBACK in tencent-cloud.md §7).
//  2. Loopback: when an in-cluster call reaches the CLB carrying the pod IP, the CLB may forward it to
//     the caller's own node, where it is dropped (TKE-CN/TKE-2021/TKE-LOOPBACK). In IPVS mode without the VIP bound
//     calls reach the CLB; with externalTrafficPolicy Cluster they are masqueraded to the node IP and the
//     CLB never picks the RS with the caller's IP; with Local they keep the pod IP (kube-proxy's KUBE-LOAD-BALANCER-LOCAL, tencent-cloud.md §6).
// The fix (TKE-LOOPBACK): health-check source 100.64.0.0/10 first, then prevent-loopback, which makes a
// supporting TKE kube-proxy bind the VIP so calls are answered on the node.
import { ServiceAnnotation, readBool, readString } from '../api/annotations.js';
import { assessment, type Assessment, type AssessmentContext, type Blocker, type Mitigation } from './assessment-result.js';
import { boundLoadBalancerId } from './target-facts.js';
import { clbGate, isIpv6, isPublic, skipGate } from './assess-common.js';
import { sourceIpTypeOf, type Change, type L4DesiredState, type L4ListenerState } from './desired-state.js';
import { L4_PROTOCOLS, L7_PROTOCOLS, type ClbFacts, type ListenerFacts, type ServiceFacts } from './facts.js';
import type { RootCauseId } from './root-causes.js';
import type { ClusterProfile } from './cluster-profile.js';
import { serviceAlternatives } from './topology.js';

type Tri = 'yes' | 'no' | 'unknown';

const COMPATIBLE: Record<string, ReadonlySet<string>> = {
  TCP: new Set(['TCP', 'TCP_SSL']),
  UDP: new Set(['UDP', 'QUIC']),
};

interface ListenerMatch {
  matched: ListenerFacts[];
  missing: string[];
  servedByL7: string[];
  unsupported: string[];
}

/** The L4 listeners that serve the Service's ports (TKE creates one per Service port, on that port). */
export function matchServiceListeners(svc: ServiceFacts, clb: ClbFacts): ListenerMatch {
  const result: ListenerMatch = { matched: [], missing: [], servedByL7: [], unsupported: [] };
  for (const p of svc.ports) {
    const label = `${p.port}/${p.protocol}`;
    const compatible = COMPATIBLE[p.protocol];
    if (!compatible) {
      result.unsupported.push(label);
      continue;
    }
    const l4 = clb.listeners.find((l) => l.port === p.port && compatible.has(l.protocol) && L4_PROTOCOLS.has(l.protocol));
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

function kubeProxyText(profile: ClusterProfile): string {
  return `kube-proxy ${profile.kubeProxyMode}${profile.kubeProxyVersion ? ` ${profile.kubeProxyVersion}` : ''}`;
}

const LOCAL_MODES: ReadonlySet<string> = new Set(['iptables', 'nftables', 'none']);

/** All backends of a VIP-sourced listener dead: what a dropped health check looks like from the CLB. */
function allDead(l: ListenerFacts): boolean {
  return !!l.health && l.health.dead > 0 && l.health.alive === 0;
}

export function assessService(svc: ServiceFacts, ctx: AssessmentContext): Assessment {
  const warnings: string[] = [];
  const skipped = skipGate(svc, warnings, ctx.ignoreSkipAnnotation === true);
  if (skipped) return skipped;
  if (svc.type !== 'LoadBalancer') {
    return assessment(svc, {
      rootCause: 'NotLoadBalancerService',
      message: `type ${svc.type}: no CLB in front of this Service`,
      warnings,
    });
  }
  if (svc.loadBalancerClass) {
    return assessment(svc, {
      rootCause: 'NotTkeLoadBalancer',
      message: `spec.loadBalancerClass ${svc.loadBalancerClass}: another load-balancer controller owns this Service`,
      warnings,
    });
  }
  // Facts built by target-facts.ts carry the parsed id; plain-data facts (tests, manifests) may only have the annotation.
  const loadBalancerId = svc.loadBalancerId ?? boundLoadBalancerId(svc.annotations, 'Service');
  const gate = clbGate(svc, loadBalancerId, ServiceAnnotation.LoadBalancerId, ctx.clb, warnings);
  if ('done' in gate) return gate.done;
  const clb = gate.clb;
  const lbId = clb.loadBalancerId;

  const listeners = matchServiceListeners(svc, clb);
  if (listeners.unsupported.length > 0) warnings.push(`ports ${listeners.unsupported.join(', ')}: protocol not served by CLB, ignored`);
  const notes: string[] = [];
  if (listeners.servedByL7.length > 0) {
    notes.push(`ports ${listeners.servedByL7.join(', ')} are served by L7 listeners (specify-protocol) and not assessed`);
  }
  if (listeners.missing.length > 0) {
    return assessment(svc, {
      rootCause: 'ListenersNotReady',
      loadBalancerId: lbId,
      message: `CLB ${lbId} has no listener yet for port(s) ${listeners.missing.join(', ')}; waiting for TKE`,
      warnings,
    });
  }

  const { policy, profile } = ctx;
  const l4 = policy.l4;
  const annotation = readBool(svc.annotations, ServiceAnnotation.PreventLoopback);
  const annotationPresent = annotation.kind === 'value' && annotation.value;
  const directAccess = readBool(svc.annotations, ServiceAnnotation.DirectAccess);
  const tkeServiceConfig = readString(svc.annotations, ServiceAnnotation.TkeServiceConfig);

  const pub = isPublic(clb);
  const ipv6 = isIpv6(clb);
  const vip = clb.vips?.[0] ?? svc.loadBalancerIps?.[0] ?? 'the CLB VIP';
  const vipSourced = listeners.matched.filter((l) => sourceIpTypeOf(l.healthCheck?.sourceIpType) === 0);
  const localMode = LOCAL_MODES.has(profile.kubeProxyMode);
  const loopFactor: RootCauseId | undefined =
    directAccess.kind === 'value' && directAccess.value
      ? 'DirectAccessSameNode'
      : svc.externalTrafficPolicy === 'Local'
        ? 'PodSourceNotMasqueraded'
        : undefined;

  const alternativesFor = (rootCause: RootCauseId) => serviceAlternatives(svc, { rootCause, profile, vip, publicClb: pub });
  // KEP-1860: kube-proxy, in every mode, ignores an address whose ipMode is Proxy: it neither answers nor binds it, so
  // calls always reach the CLB (whatever the ETP: no kube-proxy rule handles them) and no health check is dropped.
  // Nothing loopguard writes helps: prevent-loopback cannot bind an address kube-proxy ignores. TKE does not set it.
  if (!pub && (svc.ipModes ?? []).includes('Proxy')) {
    return assessment(svc, {
      rootCause: 'IpModeProxy',
      loadBalancerId: lbId,
      message: `status.loadBalancer.ingress[].ipMode is Proxy: ${kubeProxyText(profile)} does not answer VIP ${vip} on the node, so in-cluster calls go through private CLB ${lbId}, which may forward a call to the caller's own node, where it fails. loopguard has no fix for this: prevent-loopback cannot bind an address kube-proxy ignores; whoever sets ipMode (not TKE) can remove it.`,
      alternatives: alternativesFor('IpModeProxy'),
      warnings,
    });
  }

  // --- Is the VIP bound on the nodes? (decides the health-check drop and whether calls reach the CLB)
  let vipBound: Tri;
  let boundWhy = '';
  if (localMode) vipBound = 'no';
  else if (profile.vipBinding === 'Always') {
    vipBound = 'yes';
    boundWhy = `${kubeProxyText(profile)} is an upstream build, which binds every LoadBalancer IP to kube-ipvs0`;
  } else if (profile.vipBinding === 'OnAnnotation') {
    vipBound = annotationPresent ? 'yes' : 'no';
    boundWhy = `service.cloud.tencent.com/prevent-loopback is set and ${kubeProxyText(profile)} honours it`;
  } else if (profile.vipBinding === 'Never') vipBound = 'no';
  // Unknown binding: TKE builds bind only for the annotation, so without it the VIP is taken as unbound.
  else vipBound = annotationPresent ? 'unknown' : 'no';
  const observedDrop = vipSourced.filter(allDead);
  if (vipBound !== 'yes' && !localMode && observedDrop.length > 0) {
    vipBound = 'yes';
    boundWhy = `every backend of VIP-sourced listener(s) ${observedDrop.map((l) => l.listenerId).join(', ')} is Dead, as when kube-proxy binds the VIP`;
  }
  const reachesClb: Tri = localMode || vipBound === 'yes' ? 'no' : vipBound === 'no' && profile.kubeProxyMode === 'ipvs' ? 'yes' : 'unknown';
  const hcDrop: Tri = vipSourced.length === 0 ? 'no' : vipBound;
  const loopRisk: Tri = loopFactor === undefined ? 'no' : reachesClb;

  // --- Desired state
  const modeCanBind = profile.kubeProxyMode === 'ipvs' || profile.kubeProxyMode === 'unknown';
  const bindingAllows =
    profile.vipBinding === 'OnAnnotation' ||
    (l4.preventLoopback === 'Always' && (profile.vipBinding === 'Never' || profile.vipBinding === 'Unknown'));
  const wantAnnotation =
    !pub &&
    !ipv6 &&
    modeCanBind &&
    loopFactor !== undefined &&
    l4.healthCheckSource === 'Range100_64' &&
    l4.preventLoopback !== 'Never' &&
    bindingAllows;
  const sourceNeeded = l4.healthCheckSource === 'Range100_64' && !ipv6 && (wantAnnotation || vipBound !== 'no');
  const rangeRejected = ctx.capabilities?.range100_64Rejected;
  const blockers: Blocker[] = [];
  const changes: Change[] = [];
  const blockedBySource = sourceNeeded && vipSourced.length > 0 && rangeRejected !== undefined;
  if (blockedBySource) {
    blockers.push({
      reason: 'HealthCheckSourceCapabilityMissing',
      message: `CLB ${lbId} rejected the 100.64.0.0/10 health-check source (${rangeRejected}); submit a ticket to enable the CLB "non-VIP health-check source IP" feature for this account`,
    });
  } else if (sourceNeeded) {
    for (const l of vipSourced) {
      changes.push({ action: 'SetListenerHealthCheckSource', listenerId: l.listenerId, protocol: l.protocol, port: l.port, from: 0, to: 1 });
    }
  }
  // The annotation only after every source is off the VIP (docs/architecture.md §5 "Order matters").
  if (wantAnnotation && !annotationPresent && !blockedBySource) changes.push({ action: 'AddPreventLoopbackAnnotation' });

  const listenerStates: L4ListenerState[] = listeners.matched.map((l) => ({
    listenerId: l.listenerId,
    protocol: l.protocol,
    port: l.port,
    currentSourceIpType: sourceIpTypeOf(l.healthCheck?.sourceIpType),
    ...(sourceNeeded ? { desiredSourceIpType: 1 as const } : {}),
  }));
  // TKE answers prevent-loopback by switching the sources itself (tencent-cloud.md §9 #1): where the Service already
  // asks TKE, or the policy has loopguard ask it first, TKE gets its grace period before loopguard writes.
  const sourceBy = !ipv6 && !blockedBySource && (annotationPresent || (l4.sourceSwitch === 'TKEFirst' && wantAnnotation)) ? 'TKE' : 'loopguard';
  // With the source switch blocked, loopguard's own annotation would make kube-proxy bind the VIP the checks still
  // come from (every backend dead): not wanted, and given back if loopguard added it (TKEFirst asks first).
  const annotationReason = blockedBySource
    ? 'held back: the account rejected the 100.64.0.0/10 health-check source, and with the VIP bound every health check from it would be dropped'
    : preventLoopbackReason(wantAnnotation, { pub, ipv6, localMode, loopFactor, l4, profile });
  const desired: L4DesiredState = {
    layer: 'L4',
    loadBalancerId: lbId,
    listeners: listenerStates,
    preventLoopback: { present: annotationPresent, desired: wantAnnotation && !blockedBySource, reason: annotationReason },
    sourceBy,
    sourceSwitch: l4.sourceSwitch,
    ...(tkeServiceConfig.kind === 'value' ? { tkeServiceConfig: tkeServiceConfig.value } : {}),
  };

  const mitigations: Mitigation[] = [];
  if (listeners.matched.length > 0 && vipSourced.length === 0) mitigations.push('HealthCheckSourceRange100_64');
  if (annotationPresent) mitigations.push('PreventLoopbackAnnotation');

  // --- Verdict
  const listenerList = vipSourced.map((l) => `${l.listenerId} (${l.protocol}:${l.port})`).join(', ');
  // The plan names the path and why: loopguard switches the source itself before the annotation, although TKE switches
  // it on prevent-loopback too (tencent-cloud.md §9 #1), because kube-proxy binds the VIP as soon as it sees the annotation
  // and health checks from the VIP fail until the switch; TKE then finds the source switched and writes nothing.
  const switching = changes.some((c) => c.action === 'SetListenerHealthCheckSource');
  const annotating = wantAnnotation && !annotationPresent;
  const planText = switching
    ? sourceBy === 'TKE'
      ? ` Plan: ${annotating ? 'prevent-loopback (l4.sourceSwitch: TKEFirst), then ' : ''}health-check source 100.64.0.0/10 switched by TKE, which does so on prevent-loopback; loopguard writes it itself (ModifyListener) only if TKE has not within the grace period.`
      : ` Plan: health-check source 100.64.0.0/10, written by loopguard (ModifyListener)${annotating ? ', then prevent-loopback (switching first keeps health checks passing once kube-proxy binds the VIP; TKE, which switches the source on prevent-loopback too, then finds it done)' : ''}.`
    : annotating
      ? ' Plan: prevent-loopback (every listener already health-checks from 100.64.0.0/10).'
      : '';
  let rootCause: RootCauseId;
  let message: string;

  if (pub) {
    if (hcDrop === 'yes') {
      rootCause = 'VipHealthCheckDropped';
      message = `${boundWhy}; health checks from VIP ${vip} on listener(s) ${listenerList} are dropped and every backend looks dead.${dropFix(sourceNeeded, blockedBySource, ipv6)}`;
    } else {
      rootCause = 'PublicClb';
      message = `public CLB ${lbId}: in-cluster callers reach it from the node's public egress IP, which no node holds locally, so there is no loopback`;
    }
  } else if (hcDrop === 'yes') {
    rootCause = 'VipHealthCheckDropped';
    message = `${boundWhy}; health checks from VIP ${vip} on listener(s) ${listenerList} are dropped and every backend looks dead (the CLB then forwards to all, including broken ones).${dropFix(sourceNeeded, blockedBySource, ipv6)}`;
  } else if (loopRisk === 'yes') {
    const risk = loopRiskText(loopFactor, vip);
    if (l4.preventLoopback === 'Never' || l4.healthCheckSource !== 'Range100_64') {
      rootCause = 'MitigationDisabledByPolicy';
      message = `${risk} The policy does not allow the fix (l4.preventLoopback: ${l4.preventLoopback}, l4.healthCheckSource: ${l4.healthCheckSource}).`;
    } else if (profile.vipBinding === 'OnAnnotation') {
      rootCause = loopFactor as RootCauseId;
      message = `${risk}${planText}`;
    } else if (profile.vipBinding === 'Never') {
      rootCause = 'KubeProxyTooOld';
      message = `${risk} ${kubeProxyText(profile)} cannot bind the VIP (prevent-loopback): upgrade the kube-system/kube-proxy DaemonSet image to ${profile.upgradeTo ?? 'a TKE build that supports prevent-loopback'} or later.${l4.preventLoopback === 'Always' ? planText : ' loopguard then sets prevent-loopback (l4.preventLoopback: Auto).'}`;
    } else {
      rootCause = 'KubeProxyVersionUnknown';
      message = `${risk} loopguard cannot tell whether ${kubeProxyText(profile)} supports prevent-loopback: set --kube-proxy-version or l4.preventLoopback: Always.${planText}`;
    }
  } else if (loopRisk === 'unknown' || hcDrop === 'unknown') {
    const modeUnknown = profile.kubeProxyMode === 'unknown';
    rootCause = modeUnknown ? 'KubeProxyModeUnknown' : 'KubeProxyVersionUnknown';
    const parts = [
      modeUnknown
        ? `The kube-proxy mode is unknown (${profile.message || 'no profile'}).`
        : `Whether ${kubeProxyText(profile)} binds the CLB VIP is unknown.`,
    ];
    if (loopRisk === 'unknown') {
      parts.push(`If kube-proxy runs in IPVS mode without binding the VIP, in-cluster calls to VIP ${vip} can loop back: ${loopRiskShort(loopFactor)}.`);
    }
    if (hcDrop === 'unknown') parts.push(`If it binds VIP ${vip}, health checks from it on listener(s) ${listenerList} are dropped.`);
    parts.push(
      modeUnknown
        ? 'Set the operator flags --kube-proxy-mode and --kube-proxy-version so loopguard can decide.'
        : 'Set the operator flag --kube-proxy-version (or --kube-proxy-prevent-loopback) so loopguard can decide.',
    );
    message = parts.join(' ') + planText;
  } else if (vipBound === 'yes') {
    rootCause = 'LoopbackPrevented';
    // The Service's own listeners only: a shared CLB may hold other targets' listeners on the VIP (issue 22 #10).
    const own = listeners.matched.map((l) => `${l.protocol}:${l.port}`).join(', ');
    message = `kube-proxy answers VIP ${vip} on every node (${boundWhy}) and this Service's listener${listeners.matched.length === 1 ? '' : 's'} (${own}) health-check${listeners.matched.length === 1 ? 's' : ''} from 100.64.0.0/10`;
  } else if (localMode) {
    rootCause = 'VipServedLocally';
    message = `${kubeProxyText(profile)} answers VIP ${vip} on the node, so in-cluster calls never reach the CLB; no loopback`;
  } else {
    rootCause = 'MasqueradedToNodeIp';
    const mode = profile.kubeProxyMode === 'ipvs' ? 'IPVS kube-proxy' : 'kube-proxy (mode unknown, but in every mode)';
    message = `${mode} with externalTrafficPolicy: Cluster masquerades in-cluster calls to VIP ${vip} to the node IP, and the CLB never forwards a request to the backend with the caller's IP; no loopback`;
  }
  if (blockedBySource && rootCause !== 'VipHealthCheckDropped' && ROOT_AT_RISK.has(rootCause)) rootCause = 'HealthCheckSourceCapabilityMissing';
  if (blockedBySource && rootCause === 'HealthCheckSourceCapabilityMissing') {
    message = `${message} Blocked: ${blockers[0]?.message ?? ''}`;
  }
  if (notes.length > 0) message = `${message} (${notes.join('; ')})`;

  if (ipv6 && ROOT_AT_RISK.has(rootCause)) {
    return assessment(svc, {
      rootCause: 'Ipv6Clb',
      loadBalancerId: lbId,
      message: `IPv6 CLB ${lbId} cannot use the 100.64.0.0/10 health-check source (IPv4 only), so loopguard cannot mitigate: ${message}${annotationPresent ? ' Remove service.cloud.tencent.com/prevent-loopback: with an IPv6 CLB it only drops health checks.' : ''}`,
      mitigations,
      alternatives: alternativesFor('Ipv6Clb'),
      warnings,
    });
  }
  return assessment(svc, {
    rootCause,
    loadBalancerId: lbId,
    message,
    mitigations,
    desired,
    changes,
    blockers,
    alternatives: alternativesFor(rootCause),
    warnings,
  });
}

const ROOT_AT_RISK: ReadonlySet<RootCauseId> = new Set<RootCauseId>([
  'VipHealthCheckDropped',
  'PodSourceNotMasqueraded',
  'DirectAccessSameNode',
  'KubeProxyTooOld',
  'KubeProxyVersionUnknown',
  'KubeProxyModeUnknown',
  'MitigationDisabledByPolicy',
  'HealthCheckSourceCapabilityMissing',
]);

function loopRiskText(factor: RootCauseId | undefined, vip: string): string {
  if (factor === 'DirectAccessSameNode') {
    return `In-cluster calls to VIP ${vip} reach the CLB, which binds pods directly (direct-access) and may forward a call to a backend pod on the caller's own node, where the reply bypasses the CLB and the call fails.`;
  }
  return `In-cluster calls to VIP ${vip} reach the CLB with the pod IP (IPVS kube-proxy skips the masquerade for externalTrafficPolicy: Local); the CLB may forward a call to the caller's own node, where it is dropped (L4 does not retry: intermittent failures, total on a one-node cluster).`;
}

function loopRiskShort(factor: RootCauseId | undefined): string {
  return factor === 'DirectAccessSameNode'
    ? "with direct-access the CLB may send a call to a backend pod on the caller's own node"
    : "with externalTrafficPolicy: Local the calls keep the pod IP and the CLB may send them back to the caller's own node";
}

function dropFix(sourceNeeded: boolean, blocked: boolean, ipv6: boolean): string {
  if (ipv6) return ' IPv6 CLBs cannot use the 100.64.0.0/10 source: remove service.cloud.tencent.com/prevent-loopback.';
  if (blocked) return ' The switch to 100.64.0.0/10 is blocked (see Stalled).';
  if (sourceNeeded) return ' Plan: health-check source 100.64.0.0/10, written by loopguard (ModifyListener): TKE switches it on prevent-loopback, but has not here.';
  return ' Set l4.healthCheckSource: Range100_64 so loopguard switches the source, or remove service.cloud.tencent.com/prevent-loopback.';
}

function preventLoopbackReason(
  want: boolean,
  c: {
    pub: boolean;
    ipv6: boolean;
    localMode: boolean;
    loopFactor: RootCauseId | undefined;
    l4: AssessmentContext['policy']['l4'];
    profile: ClusterProfile;
  },
): string {
  if (want) {
    return c.profile.vipBinding === 'OnAnnotation'
      ? `${kubeProxyText(c.profile)} supports it; kube-proxy then answers the VIP on the node`
      : 'l4.preventLoopback: Always (takes effect once kube-proxy supports it)';
  }
  if (c.pub) return 'public CLB: no loopback';
  if (c.ipv6) return 'IPv6 CLB: the 100.64.0.0/10 health-check source the annotation needs is IPv4-only';
  if (c.localMode) return `${kubeProxyText(c.profile)} already answers the VIP locally`;
  if (c.profile.vipBinding === 'Always') return `${kubeProxyText(c.profile)} binds every LoadBalancer IP already`;
  if (c.loopFactor === undefined) return 'externalTrafficPolicy: Cluster calls are masqueraded to the node IP; not needed';
  if (c.l4.preventLoopback === 'Never') return 'l4.preventLoopback: Never';
  if (c.l4.healthCheckSource !== 'Range100_64') return `l4.healthCheckSource: ${c.l4.healthCheckSource} (the annotation needs Range100_64)`;
  if (c.profile.vipBinding === 'Never') {
    return `${kubeProxyText(c.profile)} does not support it: upgrade kube-proxy to ${c.profile.upgradeTo ?? 'a TKE build that supports prevent-loopback'} or later`;
  }
  return `support unknown (${kubeProxyText(c.profile)}): set --kube-proxy-version or l4.preventLoopback: Always`;
}
