// Steps of every kind, each branch of a kind's description, Event and metric, with what the executor must say and
// leave for it: the line Audit prints and the executor logs (user-visible, compared verbatim), the Event a finished
// step leaves, the drift-correction metric it counts. Typed per kind, so a new step kind without samples fails
// `npm run typecheck`. step-kinds.test.ts runs every sample through the registries and the executor.
import type { FieldEdit } from '../../../src/plan/config-patch.js';
import type { Step, StepKind, StepOf } from '../../../src/plan/steps.js';

export interface Sample<S extends Step = Step> {
  step: S;
  /** describeStep's line. */
  says: string;
  /** The Event the executor records on the target once the step is done. */
  event: { type: 'Normal' | 'Warning'; reason: string } | undefined;
  /** The `kind` label of loopguard_drift_corrections_total it counts under. */
  drift: string | undefined;
}

const KEEPALIVE: FieldEdit = { kind: 'keepalive', protocol: 'HTTP', port: 80, value: 1 };
const KEEPALIVE_OFF: FieldEdit = { kind: 'keepalive', protocol: 'HTTP', port: 80, value: 0 };
const RULE: FieldEdit = { kind: 'ruleSource', protocol: 'HTTPS', port: 443, domain: 'shop.example.com', url: '/api', value: 1, enable: true };
const DEFAULT_RULE: FieldEdit = { kind: 'ruleSource', protocol: 'HTTP', port: 80, domain: '', url: '/', value: 0, enable: false };

export const STEP_SAMPLES: { readonly [K in StepKind]: readonly Sample<StepOf<K>>[] } = {
  RecordOriginals: [
    { step: { kind: 'RecordOriginals', originals: { v: 1, listeners: { 'lbl-1': { sourceIpType: 0 }, 'lbl-2': { sourceIpType: 0 } }, annotations: { a: null }, loadBalancer: { passToTarget: false } } }, says: 'record the originals of 2 listener(s), 1 annotation(s), LoadBalancerPassToTarget (LoopbackRecord)', event: undefined, drift: undefined },
    { step: { kind: 'RecordOriginals', originals: { v: 1, rules: { 'lbl-1/loc-1': { sourceIpType: 0 } } } }, says: 'record the originals of 1 rule(s) (LoopbackRecord)', event: undefined, drift: undefined },
    { step: { kind: 'RecordOriginals', originals: { v: 1 } }, says: 'record the originals of nothing new (LoopbackRecord)', event: undefined, drift: undefined },
  ],
  SetListenerHealthCheckSource: [
    { step: { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-1', listenerId: 'lbl-1', protocol: 'TCP', port: 80, to: 1 }, says: 'set listener lbl-1 (TCP:80) of CLB lb-1: health-check source 100.64.0.0/10', event: { type: 'Normal', reason: 'HealthCheckSourceSwitched' }, drift: undefined },
    { step: { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-1', listenerId: 'lbl-1', protocol: 'TCP', port: 80, to: 0, restore: true }, says: 'restore listener lbl-1 (TCP:80) of CLB lb-1: health-check source VIP', event: { type: 'Normal', reason: 'OriginalsRestored' }, drift: undefined },
    { step: { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-1', listenerId: 'lbl-1', protocol: 'TCP', port: 80, to: 1, drift: true }, says: 'set listener lbl-1 (TCP:80) of CLB lb-1: health-check source 100.64.0.0/10 (drift: it had been put back outside loopguard)', event: { type: 'Warning', reason: 'DriftCorrected' }, drift: 'ListenerHealthCheckSource' },
    { step: { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-1', listenerId: 'lbl-1', protocol: '', port: 0, to: 1, why: 'TKE did not switch it within the grace period' }, says: 'set listener lbl-1 of CLB lb-1: health-check source 100.64.0.0/10 directly (TKE did not switch it within the grace period)', event: { type: 'Normal', reason: 'HealthCheckSourceSwitched' }, drift: undefined },
  ],
  SetLoadBalancerPassToTarget: [
    { step: { kind: 'SetLoadBalancerPassToTarget', loadBalancerId: 'lb-1', to: true, why: 'no pass-to-target annotation on a shared CLB' }, says: 'set CLB lb-1 LoadBalancerPassToTarget: true directly (no pass-to-target annotation on a shared CLB)', event: { type: 'Normal', reason: 'ClbTrafficAllowedByDefault' }, drift: undefined },
    { step: { kind: 'SetLoadBalancerPassToTarget', loadBalancerId: 'lb-1', to: false, restore: true }, says: 'restore CLB lb-1 LoadBalancerPassToTarget: false', event: { type: 'Normal', reason: 'OriginalsRestored' }, drift: undefined },
  ],
  AnnotateTarget: [
    { step: { kind: 'AnnotateTarget', set: { 'service.cloud.tencent.com/prevent-loopback': 'true' }, originals: { v: 1, annotations: { 'service.cloud.tencent.com/prevent-loopback': null } } }, says: 'annotate service.cloud.tencent.com/prevent-loopback: "true"; record the originals of 1 annotation(s) (LoopbackRecord)', event: { type: 'Normal', reason: 'PreventLoopbackAnnotated' }, drift: undefined },
    { step: { kind: 'AnnotateTarget', set: { 'service.cloud.tencent.com/prevent-loopback': null }, forget: ['annotation/service.cloud.tencent.com/prevent-loopback'], drops: true, restore: true }, says: 'restore annotation(s) remove service.cloud.tencent.com/prevent-loopback; delete the LoopbackRecord', event: { type: 'Normal', reason: 'OriginalsRestored' }, drift: undefined },
    { step: { kind: 'AnnotateTarget', set: { 'ingress.cloud.tencent.com/tke-service-config-auto': 'true' }, originals: { v: 1, applied: ['listener/lbl-1/sourceIpType', 'listener/lbl-2/sourceIpType'] } }, says: 'annotate ingress.cloud.tencent.com/tke-service-config-auto: "true"; record 2 applied field(s) (LoopbackRecord)', event: undefined, drift: undefined },
    { step: { kind: 'AnnotateTarget', set: { a: 'x' }, forget: ['listener/lbl-1/sourceIpType'], restore: true }, says: 'restore annotation(s) a: "x"; forget 1 restored field(s) in the LoopbackRecord', event: { type: 'Normal', reason: 'OriginalsRestored' }, drift: undefined },
    { step: { kind: 'AnnotateTarget', set: {}, forget: ['listener/lbl-1/sourceIpType'] }, says: 'forget 1 restored field(s) in the LoopbackRecord', event: undefined, drift: undefined },
  ],
  DeclareInTkeServiceConfig: [
    { step: { kind: 'DeclareInTkeServiceConfig', config: 'front-auto', loadBalancerId: 'lb-1', vip: '10.0.0.9', edits: [KEEPALIVE, RULE] }, says: 'declare in TkeServiceConfig front-auto: keepaliveEnable: 1 on HTTP:80; rule shop.example.com/api (HTTPS:443) healthCheck.sourceIpType: 1 (enable: true as on the CLB, where undeclared)', event: { type: 'Normal', reason: 'KeepaliveEnabled' }, drift: undefined },
    { step: { kind: 'DeclareInTkeServiceConfig', config: 'front-auto', loadBalancerId: 'lb-1', edits: [RULE], drift: true }, says: 'declare in TkeServiceConfig front-auto: rule shop.example.com/api (HTTPS:443) healthCheck.sourceIpType: 1 (enable: true as on the CLB, where undeclared) (drift: the config no longer declared them)', event: { type: 'Warning', reason: 'DriftCorrected' }, drift: 'Ingress' },
    { step: { kind: 'DeclareInTkeServiceConfig', config: 'front-auto', loadBalancerId: 'lb-1', edits: [KEEPALIVE_OFF, DEFAULT_RULE], restore: true }, says: 'restore in TkeServiceConfig front-auto: keepaliveEnable: 0 on HTTP:80; rule <default>/ (HTTP:80) healthCheck.sourceIpType: 0 (enable: false as on the CLB, where undeclared)', event: { type: 'Normal', reason: 'OriginalsRestored' }, drift: undefined },
    { step: { kind: 'DeclareInTkeServiceConfig', config: 'front-auto', loadBalancerId: 'lb-1', edits: [KEEPALIVE_OFF] }, says: 'declare in TkeServiceConfig front-auto: keepaliveEnable: 0 on HTTP:80', event: undefined, drift: undefined },
  ],
  RemoveFromTkeServiceConfig: [
    { step: { kind: 'RemoveFromTkeServiceConfig', config: 'front-auto', loadBalancerId: 'lb-1', removals: [{ edit: KEEPALIVE, level: 'field' }, { edit: RULE, level: 'healthCheck', enableAdded: true }, { edit: DEFAULT_RULE, enableAdded: true }] }, says: 'remove from TkeServiceConfig front-auto what loopguard added: keepaliveEnable: 1 on HTTP:80 (field); rule shop.example.com/api (HTTPS:443) healthCheck.sourceIpType: 1 (enable: true as on the CLB, where undeclared) (healthCheck + healthCheck.enable); rule <default>/ (HTTP:80) healthCheck.sourceIpType: 0 (enable: false as on the CLB, where undeclared) (healthCheck.enable)', event: { type: 'Normal', reason: 'OriginalsRestored' }, drift: undefined },
  ],
  AwaitTke: [
    { step: { kind: 'AwaitTke', reason: 'ConfigCreated', loadBalancerId: 'lb-1', config: 'front-auto' }, says: 'wait for TKE to create TkeServiceConfig front-auto', event: undefined, drift: undefined },
    { step: { kind: 'AwaitTke', reason: 'ConfigApplied', loadBalancerId: 'lb-1', config: 'front-auto', since: '2026-11-26T00:00:00.000Z' }, says: 'wait for TKE to apply TkeServiceConfig front-auto to CLB lb-1', event: undefined, drift: undefined },
    { step: { kind: 'AwaitTke', reason: 'ConfigApplied', loadBalancerId: 'lb-1', config: 'front-auto', graceOver: true, wantsKeepalive: true }, says: 'wait for TKE to apply TkeServiceConfig front-auto to CLB lb-1 (grace period over)', event: undefined, drift: undefined },
    { step: { kind: 'AwaitTke', reason: 'OriginalsApplied', loadBalancerId: 'lb-1' }, says: 'wait for TKE to restore the originals on CLB lb-1', event: undefined, drift: undefined },
    { step: { kind: 'AwaitTke', reason: 'PassToTargetApplied', loadBalancerId: 'lb-1' }, says: 'wait for TKE to apply ingress.cloud.tencent.com/pass-to-target to CLB lb-1', event: undefined, drift: undefined },
    { step: { kind: 'AwaitTke', reason: 'SourceSwitched', loadBalancerId: 'lb-1', fallback: true }, says: 'wait for TKE to switch the health-check sources of CLB lb-1 to 100.64.0.0/10 (its answer to prevent-loopback)', event: undefined, drift: undefined },
  ],
};

/** Every sample, in table order. */
export const ALL_SAMPLES: readonly Sample[] = Object.values(STEP_SAMPLES).flat();
