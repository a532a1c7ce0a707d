// L7 assessment: a TKE CLB Ingress (docs/diagnosis.md §1, §6): facts → plan → root cause; cause-text.ts writes the
// message and the advice.
import { IngressAnnotation, TKE_INGRESS_CLASS, readBool, readString } from '../api/annotations.js';
import type { AssessmentContext, Blocker, Mitigation } from './assessment-result.js';
import { clbGate, isIpv6, skipGate, type Decision } from './assess-common.js';
import type { L7Advice, L7Rule, L7Scene } from './cause.js';
import { configConflictText, keepaliveRejectedText, rangeRejectedText } from './cause-text.js';
import { sourceIpTypeOf, type Change, type L7DesiredState, type L7ListenerState, type TkeServiceConfigRef } from './desired-state.js';
import { L7_PROTOCOLS, type ClbFacts, type IngressFacts, type ListenerFacts } from './facts.js';

/** The gates (docs/diagnosis.md §4), then the L7 rules (§6): the Ingress's root cause and plan, no prose. */
export function decideIngress(ing: IngressFacts, ctx: AssessmentContext): Decision {
  const { warnings, cause: skipped } = skipGate(ing, ctx);
  if (skipped) return { cause: skipped, warnings };
  const classAnnotation = readString(ing.annotations, IngressAnnotation.Class);
  const ingressClass = classAnnotation.kind === 'value' ? classAnnotation.value.trim() : ing.ingressClassName;
  // TKE treats an Ingress without a class as qcloud (tencent-cloud.md §2).
  if (ingressClass !== undefined && ingressClass !== '' && ingressClass !== TKE_INGRESS_CLASS) return { cause: { id: 'NotClbIngress', ingressClass }, warnings };
  const gate = clbGate(ing, ctx.clb);
  if ('cause' in gate) return { cause: gate.cause, warnings };
  const { clb } = gate;
  const l7Listeners = clb.listeners.filter((l) => L7_PROTOCOLS.has(l.protocol));
  if (l7Listeners.length === 0) return { cause: { id: 'ListenersNotReady', lb: clb.loadBalancerId }, warnings };

  const direct = readBool(ing.annotations, IngressAnnotation.DirectAccess);
  const at: L7Scene = { lb: clb.loadBalancerId, noKeepalive: l7Listeners.filter((l) => l.keepaliveEnable !== 1), directAccess: direct.kind === 'value' && direct.value };
  const rules = l7Listeners.flatMap((l) => l.rules ?? []);
  // The mitigations in effect now.
  const mitigations: Mitigation[] = [
    ...(at.noKeepalive.length === 0 ? ['Keepalive' as const] : []),
    ...(rules.length > 0 && rules.every((r) => r.healthCheck?.sourceIpType === 1) ? ['RuleHealthCheckSourceRange100_64' as const] : []),
    ...(clb.passToTarget === true ? ['ClbTrafficAllowedByDefault' as const] : []),
  ];
  if (clb.loadBalancerType === 'OPEN') return { cause: { layer: 'L7', at, id: 'PublicClb' }, warnings, mitigations };
  if (isIpv6(clb)) return { cause: { layer: 'L7', at, id: 'Ipv6Clb' }, warnings, mitigations };
  const p = plan(ing, clb, l7Listeners, ctx);
  return { cause: { layer: 'L7', at: { ...at, advice: p.advice }, ...l7Rule(ing, at, p, ctx) }, warnings, mitigations, plan: p.decided };
}

/** The L7 root cause, first match wins (docs/diagnosis.md §6). */
function l7Rule(ing: IngressFacts, at: L7Scene, p: Plan, ctx: AssessmentContext): L7Rule {
  const keepaliveRejected = ctx.capabilities?.keepaliveRejected;
  if (at.noKeepalive.length === 0) return { id: 'KeepaliveEnabled' };
  if (!ctx.policy.l7.keepalive) return { id: 'MitigationDisabledByPolicy' };
  if (keepaliveRejected !== undefined) return { id: 'KeepaliveCapabilityMissing', rejected: keepaliveRejected };
  if (p.configConflict) return { id: 'TkeServiceConfigAmbiguous', target: ing };
  return { id: 'L7Loopback', passFirst: p.passFirst, config: p.config };
}

type Plan = ReturnType<typeof plan>;

/** The L7 desired state and its changes, in the order they are safe to apply (docs/diagnosis.md "L7 desired state"). */
function plan(ing: IngressFacts, clb: ClbFacts, l7Listeners: readonly ListenerFacts[], ctx: AssessmentContext) {
  const { l7 } = ctx.policy;
  const { keepaliveRejected, range100_64Rejected: rangeRejected } = ctx.capabilities ?? {};
  const lb = clb.loadBalancerId;
  const config = tkeServiceConfigOf(ing);
  const ruleSource = l7.healthCheckSource === 'Range100_64' ? 1 : l7.healthCheckSource === 'VIP' ? 0 : undefined;
  const listeners: L7ListenerState[] = l7Listeners.map((l) => ({
    listenerId: l.listenerId,
    protocol: l.protocol,
    port: l.port,
    currentKeepalive: l.keepaliveEnable === 1 ? 1 : 0,
    ...(l7.keepalive ? { desiredKeepalive: 1 as const } : {}),
    rules: (l.rules ?? []).map((r) => ({
      locationId: r.locationId,
      domain: r.domain,
      url: r.url,
      currentSourceIpType: sourceIpTypeOf(r.healthCheck?.sourceIpType),
      ...(ruleSource !== undefined ? { desiredSourceIpType: ruleSource } : {}),
      ...(r.healthCheck?.healthSwitch === 0 || r.healthCheck?.healthSwitch === 1 ? { currentHealthSwitch: r.healthCheck.healthSwitch } : {}),
    })),
  }));
  const keepaliveChanges: Change[] = listeners
    .filter((l) => l7.keepalive && l.currentKeepalive !== 1)
    .map((l) => ({ action: 'SetListenerKeepalive', listenerId: l.listenerId, protocol: l.protocol, port: l.port, from: 0, to: 1 }));
  const ruleChanges: Change[] =
    ruleSource === undefined
      ? []
      : listeners.flatMap((l) =>
          l.rules
            .filter((r) => r.currentSourceIpType !== ruleSource)
            .map((r) => ({ action: 'SetRuleHealthCheckSource' as const, listenerId: l.listenerId, locationId: r.locationId, domain: r.domain, url: r.url, from: r.currentSourceIpType, to: ruleSource })),
        );
  const rangeBlocked = ruleChanges.length > 0 && ruleSource === 1 && rangeRejected !== undefined;
  const blockers: Blocker[] = [
    ...(config.conflict ? [{ reason: 'TargetMisconfigured' as const, message: configConflictText(ing) }] : []),
    ...(keepaliveChanges.length > 0 && keepaliveRejected !== undefined ? [{ reason: 'KeepaliveCapabilityMissing' as const, message: keepaliveRejectedText(lb, keepaliveRejected) }] : []),
    ...(rangeBlocked ? [{ reason: 'HealthCheckSourceCapabilityMissing' as const, message: rangeRejectedText(lb, rangeRejected, 'L7') }] : []),
  ];
  // Keepalive is wanted whenever the policy asks for it: the listeners have it, or the plan turns it on.
  const pass = passToTarget(ing, clb, l7.keepalive, l7.allowCLBTrafficByDefault);
  const applicable: Change[] = [
    ...(pass.change ? [{ action: 'SetLoadBalancerPassToTarget' as const, from: false, to: true }] : []),
    ...(keepaliveRejected === undefined ? keepaliveChanges : []),
    ...(rangeBlocked ? [] : ruleChanges),
  ];
  const { ref } = config;
  const changes: Change[] =
    applicable.length > 0 && !config.conflict ? [...(ref.source === 'ToBeCreated' ? [{ action: 'AddTkeServiceConfigAuto' as const, configName: ref.name }] : []), ...applicable] : [];
  const desired: L7DesiredState = {
    layer: 'L7',
    loadBalancerId: lb,
    tkeServiceConfig: ref,
    listeners,
    passToTarget: {
      ...(clb.passToTarget !== undefined ? { current: clb.passToTarget } : {}),
      ...(pass.change ? { desired: true } : {}),
      ...(pass.declared !== undefined ? { declared: pass.declared } : {}),
    },
  };
  const advice: L7Advice = { ...(pass.advice ? { pass: pass.advice } : {}), xff: keepaliveChanges.length > 0 };
  return { decided: { desired, changes, blockers }, advice, configConflict: config.conflict, passFirst: pass.change, config: ref };
}

/** The TkeServiceConfig that governs the Ingress's CLB; `conflict` when the annotations contradict. */
function tkeServiceConfigOf(ing: IngressFacts): { ref: TkeServiceConfigRef; conflict: boolean } {
  const named = readString(ing.annotations, IngressAnnotation.TkeServiceConfig);
  const auto = readBool(ing.annotations, IngressAnnotation.TkeServiceConfigAuto);
  const autoName = `${ing.name}-auto-ingress-config`;
  const autoOn = auto.kind === 'value' && auto.value;
  const name = named.kind === 'value' ? named.value.trim() : '';
  if (name !== '' && autoOn) return { ref: { name: autoName, source: 'Auto' }, conflict: true };
  if (name !== '') return { ref: { name, source: 'Annotation' }, conflict: false };
  return { ref: { name: autoName, source: autoOn ? 'Auto' : 'ToBeCreated' }, conflict: false };
}

/**
 * The CLB's "allow traffic by default", wanted with keepalive. The Ingress's own pass-to-target annotation is TKE's
 * interface for the attribute (tencent-cloud.md §9 #5): TKE applies it on every sync. loopguard declares "true" there
 * rather than writing the CLB (a direct write while the annotation says otherwise would be undone: a write fight), and
 * never overrules a value the user set.
 */
function passToTarget(ing: IngressFacts, clb: ClbFacts, keepaliveWanted: boolean, allow: boolean): { change: boolean; advice?: L7Advice['pass']; declared?: string } {
  const read = readString(ing.annotations, IngressAnnotation.PassToTarget);
  const declared = read.kind === 'value' ? read.value : undefined;
  const base = { change: false, ...(declared !== undefined ? { declared } : {}) };
  if (!keepaliveWanted || clb.passToTarget !== false) return base;
  const declaredTrue = declared?.trim().toLowerCase() === 'true';
  if (declared !== undefined && !declaredTrue) return { ...base, advice: { declared } };
  if (declaredTrue || allow) return { ...base, change: true };
  return { ...base, advice: 'SecurityGroup' };
}
