// L7 assessment: a TKE CLB Ingress. A private L7 CLB forwards a pod's request to some node's NodePort
// with the pod IP as source (no SNAT); when that node is the caller's, the reply never returns to the
// CLB: ~4 s stall while the CLB retries another node, or a failure on a one-node cluster. This happens in
// every kube-proxy mode (TKE-CN/TKE-2021/TKE-LOOPBACK in tencent-cloud.md §7). The fix (TKE-LOOPBACK): the account's CLB L7 SNAT + keepalive
// capability (ticket) and `keepaliveEnable: 1` per l7Listener in the Ingress's TkeServiceConfig; nodes
// then see CLB addresses from 100.127.0.0/16, which the security group must allow ("allow by default",
// i.e. LoadBalancerPassToTarget, or an explicit rule). Rule health checks may also move to 100.64.0.0/10
// (healthCheck.sourceIpType per rule, tencent-cloud.md §1) when the policy asks.
import { IngressAnnotation, TKE_INGRESS_CLASS, readBool, readString } from '../api/annotations.js';
import type { SourceIpType } from '../api/annotations.js';
import { assessment, type Assessment, type AssessmentContext, type Blocker, type Mitigation } from './assessment-result.js';
import { boundLoadBalancerId } from './target-facts.js';
import { clbGate, isIpv6, isPublic, skipGate } from './assess-common.js';
import { sourceIpTypeOf, type Change, type L7DesiredState, type L7ListenerState, type TkeServiceConfigRef } from './desired-state.js';
import { L7_PROTOCOLS, type IngressFacts } from './facts.js';
import type { RootCauseId } from './root-causes.js';
import { TOPOLOGY_ADVICE, ingressAlternatives } from './topology.js';

export const SECURITY_GROUP_ADVICE =
  'with keepalive the nodes see CLB addresses from 100.127.0.0/16: allow 100.127.0.0/16 in the nodes\' (CVM) security group, or enable the CLB\'s "allow traffic by default" (LoadBalancerPassToTarget; l7.allowCLBTrafficByDefault: true lets loopguard do it)';
export const KEEPALIVE_TICKET =
  'submit a Tencent Cloud ticket to enable the CLB layer-7 SNAT and keepalive capabilities for this account (TKE doc "CLB Loopback", step "Avoiding layer-7 loopback")';
const XFF_NOTE = 'with keepalive the CLB no longer passes the client source IP through; backends read it from X-Forwarded-For';

function desiredSource(setting: AssessmentContext['policy']['l7']['healthCheckSource']): SourceIpType | undefined {
  return setting === 'Range100_64' ? 1 : setting === 'VIP' ? 0 : undefined;
}

/** The TkeServiceConfig that governs the Ingress's CLB, or a blocker when the annotations contradict. */
function tkeServiceConfigOf(ing: IngressFacts): { ref: TkeServiceConfigRef } | { blocker: Blocker } {
  const named = readString(ing.annotations, IngressAnnotation.TkeServiceConfig);
  const auto = readBool(ing.annotations, IngressAnnotation.TkeServiceConfigAuto);
  const autoName = `${ing.name}-auto-ingress-config`;
  const autoOn = auto.kind === 'value' && auto.value;
  if (named.kind === 'value' && named.value.trim() !== '' && autoOn) {
    return {
      blocker: {
        reason: 'TargetMisconfigured',
        message: `Ingress ${ing.namespace}/${ing.name} sets both ${IngressAnnotation.TkeServiceConfig} and ${IngressAnnotation.TkeServiceConfigAuto}; TKE allows only one: remove one of them`,
      },
    };
  }
  if (named.kind === 'value' && named.value.trim() !== '') return { ref: { name: named.value.trim(), source: 'Annotation' } };
  return { ref: { name: autoName, source: autoOn ? 'Auto' : 'ToBeCreated' } };
}

export function assessIngress(ing: IngressFacts, ctx: AssessmentContext): Assessment {
  const warnings: string[] = [];
  const skipped = skipGate(ing, warnings, ctx.ignoreSkipAnnotation === true);
  if (skipped) return skipped;

  const classAnnotation = readString(ing.annotations, IngressAnnotation.Class);
  const ingressClass = classAnnotation.kind === 'value' ? classAnnotation.value.trim() : ing.ingressClassName;
  // TKE treats an Ingress without a class as qcloud (tencent-cloud.md §2).
  if (ingressClass !== undefined && ingressClass !== '' && ingressClass !== TKE_INGRESS_CLASS) {
    return assessment(ing, {
      rootCause: 'NotClbIngress',
      message: `ingress class ${ingressClass}: not served by TKE's CLB ingress controller (${TKE_INGRESS_CLASS})`,
      warnings,
    });
  }
  // Facts built by target-facts.ts carry the parsed id; plain-data facts (tests, manifests) may only have the annotation.
  const loadBalancerId = ing.loadBalancerId ?? boundLoadBalancerId(ing.annotations, 'Ingress');
  const gate = clbGate(ing, loadBalancerId, IngressAnnotation.LoadBalancerId, ctx.clb, warnings);
  if ('done' in gate) return gate.done;
  const clb = gate.clb;
  const lbId = clb.loadBalancerId;

  const l7Listeners = clb.listeners.filter((l) => L7_PROTOCOLS.has(l.protocol));
  if (l7Listeners.length === 0) {
    return assessment(ing, {
      rootCause: 'ListenersNotReady',
      loadBalancerId: lbId,
      message: `CLB ${lbId} has no HTTP/HTTPS listener yet; waiting for TKE's ingress controller`,
      warnings,
    });
  }
  if (isPublic(clb)) {
    return assessment(ing, {
      rootCause: 'PublicClb',
      loadBalancerId: lbId,
      message: `public CLB ${lbId}: in-cluster callers reach it from the node's public egress IP, which no node holds locally, so there is no loopback`,
      mitigations: observedMitigations(l7Listeners, clb.passToTarget),
      warnings,
    });
  }
  if (isIpv6(clb)) {
    return assessment(ing, {
      rootCause: 'Ipv6Clb',
      loadBalancerId: lbId,
      message: `IPv6 CLB ${lbId}: loopguard does not manage IPv6 CLBs (the 100.64.0.0/10 source is IPv4-only); in-cluster callers should ${TOPOLOGY_ADVICE}`,
      mitigations: observedMitigations(l7Listeners, clb.passToTarget),
      alternatives: ingressAlternatives(ing, 'Ipv6Clb'),
      warnings,
    });
  }

  const l7 = ctx.policy.l7;
  const blockers: Blocker[] = [];
  const advice: string[] = [];
  const config = tkeServiceConfigOf(ing);
  if ('blocker' in config) blockers.push(config.blocker);
  const ref: TkeServiceConfigRef = 'ref' in config ? config.ref : { name: `${ing.name}-auto-ingress-config`, source: 'Auto' };

  const keepaliveOn = l7Listeners.every((l) => l.keepaliveEnable === 1);
  const keepaliveRejected = ctx.capabilities?.keepaliveRejected;
  const rangeRejected = ctx.capabilities?.range100_64Rejected;
  const wantKeepalive = l7.keepalive;
  const ruleSource = desiredSource(l7.healthCheckSource);

  const listeners: L7ListenerState[] = l7Listeners.map((l) => ({
    listenerId: l.listenerId,
    protocol: l.protocol,
    port: l.port,
    currentKeepalive: l.keepaliveEnable === 1 ? 1 : 0,
    ...(wantKeepalive ? { desiredKeepalive: 1 as const } : {}),
    rules: (l.rules ?? []).map((r) => ({
      locationId: r.locationId,
      domain: r.domain,
      url: r.url,
      currentSourceIpType: sourceIpTypeOf(r.healthCheck?.sourceIpType),
      ...(ruleSource !== undefined ? { desiredSourceIpType: ruleSource } : {}),
      ...(r.healthCheck?.healthSwitch === 0 || r.healthCheck?.healthSwitch === 1 ? { currentHealthSwitch: r.healthCheck.healthSwitch } : {}),
    })),
  }));

  // --- changes, in the order they are safe to apply
  const keepaliveChanges: Change[] = [];
  if (wantKeepalive) {
    for (const l of listeners) {
      if (l.currentKeepalive !== 1) {
        keepaliveChanges.push({ action: 'SetListenerKeepalive', listenerId: l.listenerId, protocol: l.protocol, port: l.port, from: 0, to: 1 });
      }
    }
  }
  if (keepaliveChanges.length > 0 && keepaliveRejected !== undefined) {
    blockers.push({ reason: 'KeepaliveCapabilityMissing', message: `CLB ${lbId} rejected keepalive (${keepaliveRejected}): ${KEEPALIVE_TICKET}` });
  }
  const ruleChanges: Change[] = [];
  if (ruleSource !== undefined) {
    for (const l of listeners) {
      for (const r of l.rules) {
        if (r.currentSourceIpType !== ruleSource) {
          ruleChanges.push({
            action: 'SetRuleHealthCheckSource',
            listenerId: l.listenerId,
            locationId: r.locationId,
            domain: r.domain,
            url: r.url,
            from: r.currentSourceIpType,
            to: ruleSource,
          });
        }
      }
    }
  }
  if (ruleChanges.length > 0 && ruleSource === 1 && rangeRejected !== undefined) {
    blockers.push({
      reason: 'HealthCheckSourceCapabilityMissing',
      message: `CLB ${lbId} rejected the 100.64.0.0/10 health-check source (${rangeRejected}); submit a ticket to enable the CLB "non-VIP health-check source IP" feature, or set l7.healthCheckSource: Unmanaged`,
    });
  }
  const keepaliveWanted = wantKeepalive && (keepaliveOn || keepaliveChanges.length > 0);
  const passChange: Change[] = [];
  // The Ingress's own pass-to-target annotation is TKE's interface for the attribute (tencent-cloud.md §9 #5): TKE applies
  // it on every sync. loopguard declares "true" there rather than writing the CLB (a direct write while the
  // annotation says otherwise would be undone: a write fight), and never overrules a value the user set.
  const declaredPass = readString(ing.annotations, IngressAnnotation.PassToTarget);
  const declaredTrue = declaredPass.kind === 'value' && declaredPass.value.trim().toLowerCase() === 'true';
  if (keepaliveWanted && clb.passToTarget === false) {
    if (declaredPass.kind === 'value' && !declaredTrue) {
      advice.push(
        `${IngressAnnotation.PassToTarget}: ${JSON.stringify(declaredPass.value)} declares the CLB's "allow traffic by default" and TKE applies it; loopguard does not overrule it: set it to "true", or allow 100.127.0.0/16 in the nodes' (CVM) security group`,
      );
    } else if (declaredTrue || l7.allowCLBTrafficByDefault) passChange.push({ action: 'SetLoadBalancerPassToTarget', from: false, to: true });
    else advice.push(SECURITY_GROUP_ADVICE);
  }
  if (keepaliveChanges.length > 0) advice.push(XFF_NOTE);

  const applicable: Change[] = [
    ...passChange,
    ...(keepaliveRejected === undefined ? keepaliveChanges : []),
    ...(rangeRejected === undefined || ruleSource !== 1 ? ruleChanges : []),
  ];
  const configBlocked = 'blocker' in config;
  const changes: Change[] =
    applicable.length > 0 && !configBlocked
      ? [...(ref.source === 'ToBeCreated' ? [{ action: 'AddTkeServiceConfigAuto' as const, configName: ref.name }] : []), ...applicable]
      : [];
  const desired: L7DesiredState = {
    layer: 'L7',
    loadBalancerId: lbId,
    tkeServiceConfig: ref,
    listeners,
    passToTarget: {
      ...(clb.passToTarget !== undefined ? { current: clb.passToTarget } : {}),
      ...(passChange.length > 0 ? { desired: true } : {}),
      ...(declaredPass.kind === 'value' ? { declared: declaredPass.value } : {}),
    },
  };

  // --- verdict
  const noKeepalive = l7Listeners.filter((l) => l.keepaliveEnable !== 1).map((l) => `${l.listenerId} (${l.protocol}:${l.port})`);
  const risk = `private CLB ${lbId} forwards in-cluster calls to a node's NodePort with the pod IP as source (no SNAT on listener(s) ${noKeepalive.join(', ')}); when it picks the caller's node the call stalls ~4 s while the CLB retries another node, or fails on a one-node cluster.`;
  let rootCause: RootCauseId;
  let message: string;
  if (keepaliveOn) {
    rootCause = 'KeepaliveEnabled';
    message = `keepalive (SNAT) is on for every L7 listener of CLB ${lbId}; the CLB reaches nodes from its own addresses, so calls cannot loop back`;
  } else if (!wantKeepalive) {
    rootCause = 'MitigationDisabledByPolicy';
    message = `${risk} The policy sets l7.keepalive: false, so loopguard leaves it.`;
  } else if (keepaliveRejected !== undefined) {
    rootCause = 'KeepaliveCapabilityMissing';
    message = `${risk} Keepalive was rejected (${keepaliveRejected}): ${KEEPALIVE_TICKET}.`;
  } else if (configBlocked) {
    rootCause = 'TkeServiceConfigAmbiguous';
    message = `${risk} ${config.blocker.message}.`;
  } else {
    rootCause = 'L7Loopback';
    message = `${risk} Plan: ${passChange.length > 0 ? `first the CLB's "allow traffic by default" through ${IngressAnnotation.PassToTarget}: "true" (TKE applies it; loopguard writes the CLB only if TKE has not within its grace period), then ` : ''}keepaliveEnable: 1 on each L7 listener through TkeServiceConfig ${ref.name}${ref.source === 'ToBeCreated' ? ' (created by adding tke-service-config-auto)' : ''}, which TKE applies and keeps; this needs the account's CLB L7 SNAT + keepalive capability (ticket).`;
  }
  const direct = readBool(ing.annotations, IngressAnnotation.DirectAccess);
  if (direct.kind === 'value' && direct.value && !keepaliveOn) {
    message += ' (direct-access binds pods, not NodePorts; a call can still loop when the backend pod runs on the caller’s node)';
  }
  return assessment(ing, {
    rootCause,
    loadBalancerId: lbId,
    message,
    mitigations: observedMitigations(l7Listeners, clb.passToTarget),
    desired,
    changes,
    blockers,
    advice,
    alternatives: ingressAlternatives(ing, rootCause),
    warnings,
  });
}

function observedMitigations(
  listeners: readonly { keepaliveEnable?: number; rules?: readonly { healthCheck?: { sourceIpType?: number } }[] }[],
  passToTarget: boolean | undefined,
): Mitigation[] {
  const out: Mitigation[] = [];
  if (listeners.length > 0 && listeners.every((l) => l.keepaliveEnable === 1)) out.push('Keepalive');
  const rules = listeners.flatMap((l) => l.rules ?? []);
  if (rules.length > 0 && rules.every((r) => r.healthCheck?.sourceIpType === 1)) out.push('RuleHealthCheckSourceRange100_64');
  if (passToTarget === true) out.push('ClbTrafficAllowedByDefault');
  return out;
}
