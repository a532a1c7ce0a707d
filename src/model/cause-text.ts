// The one place the assessment's prose is written: a decided cause (cause.ts) → its message and advice. Status,
// Events, `loopguard doctor`/`plan`, the docs and the demo quote these texts, so a change here is a user-visible change.
import { IngressAnnotation, TKE_INGRESS_CLASS } from '../api/annotations.js';
import type { ResolvedPolicySpec } from '../api/loopbackpolicy.js';
import { quoteValue } from '../api/text.js';
import type { ClusterProfile } from './cluster-profile.js';
import type { ListenerFacts } from './facts.js';
import type { BoundBy, Cause, DropFix, GateCause, L4Cause, L4PlanSummary, L4Rule, L4Scene, L7Advice, L7Cause, LoopFactor } from './cause.js';
import { TOPOLOGY_ADVICE } from './topology.js';

export const SECURITY_GROUP_ADVICE =
  'with keepalive the nodes see CLB addresses from 100.127.0.0/16: allow 100.127.0.0/16 in the nodes\' (CVM) security group, or enable the CLB\'s "allow traffic by default" (LoadBalancerPassToTarget; l7.allowCLBTrafficByDefault: true lets loopguard do it)';
export const KEEPALIVE_TICKET =
  'submit a Tencent Cloud ticket to enable the CLB layer-7 SNAT and keepalive capabilities for this account (TKE doc "CLB Loopback", step "Avoiding layer-7 loopback")';
const XFF_NOTE = 'with keepalive the CLB no longer passes the client source IP through; backends read it from X-Forwarded-For';

export interface RenderedCause {
  message: string;
  advice: readonly string[];
}

export function renderCause(c: Cause): RenderedCause {
  if (!('layer' in c)) return { message: gateText(c), advice: [] };
  if (c.layer === 'L4') return { message: l4Text(c), advice: [] };
  return { message: l7Text(c), advice: c.at.advice ? l7AdviceText(c.at.advice) : [] };
}

function kubeProxyText(profile: ClusterProfile): string {
  return `kube-proxy ${profile.kubeProxyMode}${profile.kubeProxyVersion ? ` ${profile.kubeProxyVersion}` : ''}`;
}

/** `lbl-x (TCP:80), lbl-y (UDP:53)` */
function labels(listeners: readonly ListenerFacts[]): string {
  return listeners.map((l) => `${l.listenerId} (${l.protocol}:${l.port})`).join(', ');
}

const publicText = (lb: string) =>
  `public CLB ${lb}: in-cluster callers reach it from the node's public egress IP, which no node holds locally, so there is no loopback`;

function gateText(c: GateCause): string {
  switch (c.id) {
    case 'SkipAnnotation':
      return 'opted out by loopguard.dev/skip; loopguard reports the target and restores anything it changed';
    case 'TkeSyncSkipped':
      return `${c.kind === 'Service' ? 'service.cloud.tencent.com/mode' : 'ingress.cloud.tencent.com/mode'}: skip stops TKE's controller from syncing this ${c.kind}, so loopguard leaves it alone too`;
    case 'NotLoadBalancerService':
      return `type ${c.type}: no CLB in front of this Service`;
    case 'NotTkeLoadBalancer':
      return `spec.loadBalancerClass ${c.loadBalancerClass}: another load-balancer controller owns this Service`;
    case 'NotClbIngress':
      return `ingress class ${c.ingressClass}: not served by TKE's CLB ingress controller (${TKE_INGRESS_CLASS})`;
    case 'ClbNotAssigned':
      return `waiting for TKE to assign a CLB (annotation ${c.idAnnotation} not set yet); loopguard re-assesses when it appears`;
    case 'ClbNotFound':
      return c.notAnId !== undefined
        ? `${c.idAnnotation} is ${quoteValue(c.notAnId, 40)}, which is not a CLB id (lb-…); waiting for TKE to write the id back`
        : `CLB ${c.lb} (from ${c.idAnnotation}) does not exist in this region; waiting for TKE to recreate it or update the annotation`;
    case 'ClbNotObserved':
      return `CLB ${c.lb} not read yet`;
    case 'ClbCreating':
      return `CLB ${c.lb} is still being created`;
    case 'ClassicClb':
      return `CLB ${c.lb} is a classic CLB; loopguard supports only CLB (Forward=1) instances`;
    case 'ForeignClb':
      return `${c.why}; ${c.idAnnotation} is written by TKE — if someone changed it, remove the change and TKE writes it back`;
    case 'ClbOwnershipUnverified':
      return `${c.why}; loopguard acts once it can tell the CLB is this ${c.kind}'s`;
    case 'ListenersNotReady':
      return c.missing
        ? `CLB ${c.lb} has no listener yet for port(s) ${c.missing.join(', ')}; waiting for TKE`
        : `CLB ${c.lb} has no HTTP/HTTPS listener yet; waiting for TKE's ingress controller`;
  }
}

function l4Text(c: L4Cause): string {
  const { at } = c;
  const noted = (text: string) => (at.servedByL7.length > 0 ? `${text} (ports ${at.servedByL7.join(', ')} are served by L7 listeners (specify-protocol) and not assessed)` : text);
  switch (c.id) {
    case 'IpModeProxy':
      return `status.loadBalancer.ingress[].ipMode is Proxy: ${kubeProxyText(at.profile)} does not answer VIP ${at.vip} on the node, so in-cluster calls go through private CLB ${at.lb}, which may forward a call to the caller's own node, where it fails. loopguard has no fix for this: prevent-loopback cannot bind an address kube-proxy ignores; whoever sets ipMode (not TKE) can remove it.`;
    case 'HealthCheckSourceCapabilityMissing':
      return noted(`${l4RuleText(c.risk, at)} Blocked: ${rangeRejectedText(at.lb, c.rejected, 'L4')}`);
    case 'Ipv6Clb':
      return `IPv6 CLB ${at.lb} cannot use the 100.64.0.0/10 health-check source (IPv4 only), so loopguard cannot mitigate: ${noted(l4RuleText(c.risk, at))}${c.annotationPresent ? ' Remove service.cloud.tencent.com/prevent-loopback: with an IPv6 CLB it only drops health checks.' : ''}`;
    default:
      return noted(l4RuleText(c, at));
  }
}

function l4RuleText(r: L4Rule, at: L4Scene): string {
  const kp = kubeProxyText(at.profile);
  switch (r.id) {
    case 'VipHealthCheckDropped':
      return `${boundText(r.boundBy, at.profile)}; health checks from VIP ${at.vip} on listener(s) ${labels(at.vipSourced)} are dropped and every backend looks dead${at.public ? '' : ' (the CLB then forwards to all, including broken ones)'}.${dropFixText(r.fix)}`;
    case 'PublicClb':
      return publicText(at.lb);
    case 'MitigationDisabledByPolicy':
      return `${loopText(r.factor, at.vip)} The policy does not allow the fix (l4.preventLoopback: ${r.l4.preventLoopback}, l4.healthCheckSource: ${r.l4.healthCheckSource}).`;
    case 'PodSourceNotMasqueraded':
    case 'DirectAccessSameNode':
      return `${loopText(r.id, at.vip)}${planText(r.plan)}`;
    case 'KubeProxyTooOld':
      return `${loopText(r.factor, at.vip)} ${kp} cannot bind the VIP (prevent-loopback): upgrade the kube-system/kube-proxy DaemonSet image to ${at.profile.upgradeTo ?? 'a TKE build that supports prevent-loopback'} or later.${r.always ? planText(r.plan) : ' loopguard then sets prevent-loopback (l4.preventLoopback: Auto).'}`;
    case 'KubeProxyModeUnknown':
    case 'KubeProxyVersionUnknown':
      if (!('open' in r)) {
        return `${loopText(r.factor, at.vip)} loopguard cannot tell whether ${kp} supports prevent-loopback: set --kube-proxy-version or l4.preventLoopback: Always.${planText(r.plan)}`;
      }
      return openText(r.id === 'KubeProxyModeUnknown', r.open, at) + planText(r.plan);
    case 'LoopbackPrevented': {
      const one = at.listeners.length === 1;
      // The Service's own listeners only: a shared CLB may hold other targets' listeners on the VIP (issue 22 #10).
      return `kube-proxy answers VIP ${at.vip} on every node (${boundText(r.boundBy, at.profile)}) and this Service's listener${one ? '' : 's'} (${at.listeners.map((l) => `${l.protocol}:${l.port}`).join(', ')}) health-check${one ? 's' : ''} from 100.64.0.0/10`;
    }
    case 'VipServedLocally':
      return `${kp} answers VIP ${at.vip} on the node, so in-cluster calls never reach the CLB; no loopback`;
    case 'MasqueradedToNodeIp':
      return `${at.profile.kubeProxyMode === 'ipvs' ? 'IPVS kube-proxy' : 'kube-proxy (mode unknown, but in every mode)'} with externalTrafficPolicy: Cluster masquerades in-cluster calls to VIP ${at.vip} to the node IP, and the CLB never forwards a request to the backend with the caller's IP; no loopback`;
  }
}

function openText(modeUnknown: boolean, open: { loop?: LoopFactor; drop: boolean }, at: L4Scene): string {
  const parts = [
    modeUnknown
      ? `The kube-proxy mode is unknown (${at.profile.message || 'no profile'}).`
      : `Whether ${kubeProxyText(at.profile)} binds the CLB VIP is unknown.`,
  ];
  if (open.loop) {
    const how =
      open.loop === 'DirectAccessSameNode'
        ? "with direct-access the CLB may send a call to a backend pod on the caller's own node"
        : "with externalTrafficPolicy: Local the calls keep the pod IP and the CLB may send them back to the caller's own node";
    parts.push(`If kube-proxy runs in IPVS mode without binding the VIP, in-cluster calls to VIP ${at.vip} can loop back: ${how}.`);
  }
  if (open.drop) parts.push(`If it binds VIP ${at.vip}, health checks from it on listener(s) ${labels(at.vipSourced)} are dropped.`);
  parts.push(
    modeUnknown
      ? 'Set the operator flags --kube-proxy-mode and --kube-proxy-version so loopguard can decide.'
      : 'Set the operator flag --kube-proxy-version (or --kube-proxy-prevent-loopback) so loopguard can decide.',
  );
  return parts.join(' ');
}

function boundText(b: BoundBy, profile: ClusterProfile): string {
  switch (b.by) {
    case 'Upstream':
      return `${kubeProxyText(profile)} is an upstream build, which binds every LoadBalancer IP to kube-ipvs0`;
    case 'Annotation':
      return `service.cloud.tencent.com/prevent-loopback is set and ${kubeProxyText(profile)} honours it`;
    case 'DeadBackends':
      return `every backend of VIP-sourced listener(s) ${b.listenerIds.join(', ')} is Dead, as when kube-proxy binds the VIP`;
  }
}

function loopText(factor: LoopFactor, vip: string): string {
  if (factor === 'DirectAccessSameNode') {
    return `In-cluster calls to VIP ${vip} reach the CLB, which binds pods directly (direct-access) and may forward a call to a backend pod on the caller's own node, where the reply bypasses the CLB and the call fails.`;
  }
  return `In-cluster calls to VIP ${vip} reach the CLB with the pod IP (IPVS kube-proxy skips the masquerade for externalTrafficPolicy: Local); the CLB may forward a call to the caller's own node, where it is dropped (L4 does not retry: intermittent failures, total on a one-node cluster).`;
}

// The plan names the path and why: loopguard switches the source itself before the annotation, although TKE switches
// it on prevent-loopback too (tencent-cloud.md §9 #1), because kube-proxy binds the VIP as soon as it sees the annotation
// and health checks from the VIP fail until the switch; TKE then finds the source switched and writes nothing.
function planText(p: L4PlanSummary): string {
  if (p.switchBy === 'TKE') {
    return ` Plan: ${p.annotate ? 'prevent-loopback (l4.sourceSwitch: TKEFirst), then ' : ''}health-check source 100.64.0.0/10 switched by TKE, which does so on prevent-loopback; loopguard writes it itself (ModifyListener) only if TKE has not within the grace period.`;
  }
  if (p.switchBy === 'loopguard') {
    return ` Plan: health-check source 100.64.0.0/10, written by loopguard (ModifyListener)${p.annotate ? ', then prevent-loopback (switching first keeps health checks passing once kube-proxy binds the VIP; TKE, which switches the source on prevent-loopback too, then finds it done)' : ''}.`;
  }
  return p.annotate ? ' Plan: prevent-loopback (every listener already health-checks from 100.64.0.0/10).' : '';
}

function dropFixText(fix: DropFix): string {
  switch (fix) {
    case 'Ipv6':
      return ' IPv6 CLBs cannot use the 100.64.0.0/10 source: remove service.cloud.tencent.com/prevent-loopback.';
    case 'Blocked':
      return ' The switch to 100.64.0.0/10 is blocked (see Stalled).';
    case 'Planned':
      return ' Plan: health-check source 100.64.0.0/10, written by loopguard (ModifyListener): TKE switches it on prevent-loopback, but has not here.';
    case 'PolicyForbids':
      return ' Set l4.healthCheckSource: Range100_64 so loopguard switches the source, or remove service.cloud.tencent.com/prevent-loopback.';
  }
}

function l7Text(c: L7Cause): string {
  const { at } = c;
  const risk = `private CLB ${at.lb} forwards in-cluster calls to a node's NodePort with the pod IP as source (no SNAT on listener(s) ${labels(at.noKeepalive)}); when it picks the caller's node the call stalls ~4 s while the CLB retries another node, or fails on a one-node cluster.`;
  const direct = at.directAccess ? ' (direct-access binds pods, not NodePorts; a call can still loop when the backend pod runs on the caller’s node)' : '';
  switch (c.id) {
    case 'PublicClb':
      return publicText(at.lb);
    case 'Ipv6Clb':
      return `IPv6 CLB ${at.lb}: loopguard does not manage IPv6 CLBs (the 100.64.0.0/10 source is IPv4-only); in-cluster callers should ${TOPOLOGY_ADVICE}`;
    case 'KeepaliveEnabled':
      return `keepalive (SNAT) is on for every L7 listener of CLB ${at.lb}; the CLB reaches nodes from its own addresses, so calls cannot loop back`;
    case 'MitigationDisabledByPolicy':
      return `${risk} The policy sets l7.keepalive: false, so loopguard leaves it.${direct}`;
    case 'KeepaliveCapabilityMissing':
      return `${risk} Keepalive was rejected (${c.rejected}): ${KEEPALIVE_TICKET}.${direct}`;
    case 'TkeServiceConfigAmbiguous':
      return `${risk} ${configConflictText(c.target)}.${direct}`;
    case 'L7Loopback':
      return `${risk} Plan: ${c.passFirst ? `first the CLB's "allow traffic by default" through ${IngressAnnotation.PassToTarget}: "true" (TKE applies it; loopguard writes the CLB only if TKE has not within its grace period), then ` : ''}keepaliveEnable: 1 on each L7 listener through TkeServiceConfig ${c.config.name}${c.config.source === 'ToBeCreated' ? ' (created by adding tke-service-config-auto)' : ''}, which TKE applies and keeps; this needs the account's CLB L7 SNAT + keepalive capability (ticket).${direct}`;
  }
}

function l7AdviceText(a: L7Advice): string[] {
  const out: string[] = [];
  if (a.pass === 'SecurityGroup') out.push(SECURITY_GROUP_ADVICE);
  else if (a.pass) {
    out.push(
      `${IngressAnnotation.PassToTarget}: ${JSON.stringify(a.pass.declared)} declares the CLB's "allow traffic by default" and TKE applies it; loopguard does not overrule it: set it to "true", or allow 100.127.0.0/16 in the nodes' (CVM) security group`,
    );
  }
  if (a.xff) out.push(XFF_NOTE);
  return out;
}

/** A blocker's message: the account rejected the 100.64.0.0/10 health-check source. */
export function rangeRejectedText(lb: string, rejected: string, layer: 'L4' | 'L7'): string {
  return `CLB ${lb} rejected the 100.64.0.0/10 health-check source (${rejected}); submit a ticket to enable the CLB "non-VIP health-check source IP" feature${layer === 'L4' ? ' for this account' : ', or set l7.healthCheckSource: Unmanaged'}`;
}

/** A blocker's message: the account rejected keepalive. */
export function keepaliveRejectedText(lb: string, rejected: string): string {
  return `CLB ${lb} rejected keepalive (${rejected}): ${KEEPALIVE_TICKET}`;
}

/** A blocker's message: both TkeServiceConfig annotations on one Ingress. */
export function configConflictText(ing: { namespace: string; name: string }): string {
  return `Ingress ${ing.namespace}/${ing.name} sets both ${IngressAnnotation.TkeServiceConfig} and ${IngressAnnotation.TkeServiceConfigAuto}; TKE allows only one: remove one of them`;
}

/** Why the Service's desired state does (not) want prevent-loopback (`desired.preventLoopback.reason`), first reason first. */
export function preventLoopbackReason(
  want: boolean,
  c: { blocked: boolean; public: boolean; ipv6: boolean; localMode: boolean; loopFactor: LoopFactor | undefined; l4: ResolvedPolicySpec['l4']; profile: ClusterProfile },
): string {
  const kp = kubeProxyText(c.profile);
  // With the source switch blocked, loopguard's own annotation would make kube-proxy bind the VIP the checks still
  // come from (every backend dead): not wanted, and given back if loopguard added it (TKEFirst asks first).
  if (c.blocked) return 'held back: the account rejected the 100.64.0.0/10 health-check source, and with the VIP bound every health check from it would be dropped';
  if (want) {
    return c.profile.vipBinding === 'OnAnnotation' ? `${kp} supports it; kube-proxy then answers the VIP on the node` : 'l4.preventLoopback: Always (takes effect once kube-proxy supports it)';
  }
  if (c.public) return 'public CLB: no loopback';
  if (c.ipv6) return 'IPv6 CLB: the 100.64.0.0/10 health-check source the annotation needs is IPv4-only';
  if (c.localMode) return `${kp} already answers the VIP locally`;
  if (c.profile.vipBinding === 'Always') return `${kp} binds every LoadBalancer IP already`;
  if (c.loopFactor === undefined) return 'externalTrafficPolicy: Cluster calls are masqueraded to the node IP; not needed';
  if (c.l4.preventLoopback === 'Never') return 'l4.preventLoopback: Never';
  if (c.l4.healthCheckSource !== 'Range100_64') return `l4.healthCheckSource: ${c.l4.healthCheckSource} (the annotation needs Range100_64)`;
  if (c.profile.vipBinding === 'Never') return `${kp} does not support it: upgrade kube-proxy to ${c.profile.upgradeTo ?? 'a TKE build that supports prevent-loopback'} or later`;
  return `support unknown (${kp}): set --kube-proxy-version or l4.preventLoopback: Always`;
}
