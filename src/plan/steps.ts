// The steps of a plan: one vocabulary for what Audit prints (status.targets[].plan) and what Enforce executes.
// Each step is one write (or one wait) with everything the executor needs; its description is the line a user
// reads, before (Audit) and after (the executor logs every executed step with the same text).
import type { OriginalsRecord, SourceIpType } from '../api/annotations.js';
import type { TargetRef } from '../model/facts.js';
import type { TargetError } from '../model/status.js';
import type { FieldEdit, Removal } from './config-patch.js';

export type Layer = 'L4' | 'L7';

/** What the executor waits for TKE to do; the target's plan ends there until a later observation. */
/**
 * `VipReleased`: not TKE's controller but TKE's kube-proxy, which unbinds the VIP on every node once prevent-loopback is
 * off; a release puts sources back on the VIP only after that (a bound VIP drops VIP-sourced checks).
 */
export type AwaitReason = 'ConfigCreated' | 'ConfigApplied' | 'OriginalsApplied' | 'PassToTargetApplied' | 'SourceSwitched' | 'VipReleased';

export type Step =
  /** Merge originals into the target's LoopbackRecord (before the change they belong to: a crash can still restore). */
  | { kind: 'RecordOriginals'; record: OriginalsRecord }
  /** ModifyListener with the listener's full HealthCheck, only SourceIpType changed; the task is awaited. */
  | {
      kind: 'SetListenerHealthCheckSource';
      loadBalancerId: string;
      listenerId: string;
      protocol: string;
      port: number;
      to: SourceIpType;
      /** Restoring a recorded original (release). */
      restore?: boolean;
      /** loopguard had applied this before: something put the original back. */
      drift?: boolean;
      /** Why loopguard writes it although TKE was asked to (prevent-loopback): TKE did not within the grace period. */
      why?: string;
    }
  /** A direct write; `why` says why not through the Ingress's pass-to-target annotation (TKE's interface). */
  | { kind: 'SetLoadBalancerPassToTarget'; loadBalancerId: string; to: boolean; restore?: boolean; why?: string }
  /**
   * Annotations on the target (null removes), with a change of its LoopbackRecord applied to the record as read at
   * write time: `record` merged in (existing entries win) before the annotations change, `forget` (field keys given
   * back by a release) after. A record left empty is deleted; `drops` says the plan expects that.
   */
  | {
      kind: 'AnnotateTarget';
      set: Record<string, string | null>;
      record?: OriginalsRecord;
      forget?: string[];
      drops?: boolean;
      restore?: boolean;
      /** A release that leaves sources on 100.64.0.0/10 instead of the VIP (the VIP stays bound): what and why. */
      kept?: string;
    }
  /** Single-field JSON patches in the TkeServiceConfig, guarded by `test` ops and resourceVersion. */
  | { kind: 'DeclareInTkeServiceConfig'; config: string; loadBalancerId: string; vip?: string; edits: FieldEdit[]; restore?: boolean; drift?: boolean }
  /** Take out of the config what loopguard added to declare its fields (release, once the CLB shows the originals). */
  | { kind: 'RemoveFromTkeServiceConfig'; config: string; loadBalancerId: string; vip?: string; removals: Removal[] }
  /**
   * Wait for TKE: to create the auto config, to apply declared fields, or to apply restored originals. Past TKE's
   * grace period (`graceOver`: a CLB read after it still shows the old values) or on TKE's Warning Event the wait
   * ends in a target error (mitigation/tke-wait.ts), unless loopguard then writes it itself (`fallback`).
   */
  | {
      kind: 'AwaitTke';
      reason: AwaitReason;
      loadBalancerId: string;
      config?: string;
      /** When TKE was asked (the grace period's start); without it, the first time the executor saw the wait. */
      since?: string;
      graceOver?: boolean;
      wantsKeepalive?: boolean;
      /** loopguard writes it itself once the grace period is over (a later round plans it): the wait never fails. */
      fallback?: boolean;
    };

export type StepKind = Step['kind'];

export interface TargetPlan {
  target: TargetRef;
  layer: Layer;
  /** `Mitigate`: a target the policy manages; `Release`: give back what loopguard changed on it. */
  purpose: 'Mitigate' | 'Release';
  steps: Step[];
  /** A problem found while planning that only a human can fix; the steps stop before it. */
  error?: TargetError;
}

const SOURCE: Record<SourceIpType, string> = { 0: 'VIP', 1: '100.64.0.0/10' };

function editText(e: FieldEdit): string {
  return e.kind === 'keepalive'
    ? `keepaliveEnable: ${e.value} on ${e.protocol}:${e.port}`
    : `rule ${e.domain || '<default>'}${e.url} (${e.protocol}:${e.port}) healthCheck.sourceIpType: ${e.value} (enable: ${String(e.enable)} as on the CLB, where undeclared)`;
}

function removalText(r: Removal): string {
  const what = [r.level, r.enableAdded ? 'healthCheck.enable' : undefined].filter((x) => x !== undefined).join(' + ');
  return `${editText(r.edit)} (${what})`;
}

function recordText(record: OriginalsRecord): string {
  const parts: string[] = [];
  const listeners = Object.keys(record.listeners ?? {}).length;
  const rules = Object.keys(record.rules ?? {}).length;
  const annotations = Object.keys(record.annotations ?? {}).length;
  if (listeners > 0) parts.push(`${listeners} listener(s)`);
  if (rules > 0) parts.push(`${rules} rule(s)`);
  if (annotations > 0) parts.push(`${annotations} annotation(s)`);
  if (record.loadBalancer?.passToTarget !== undefined) parts.push('LoadBalancerPassToTarget');
  return parts.length > 0 ? parts.join(', ') : 'nothing new';
}

function annotationText(set: Record<string, string | null>): string {
  return Object.entries(set)
    .map(([k, v]) => (v === null ? `remove ${k}` : `${k}: ${JSON.stringify(v)}`))
    .join(', ');
}

/** The line Audit prints and the executor logs for a step. */
export function describeStep(step: Step): string {
  switch (step.kind) {
    case 'RecordOriginals':
      return `record the originals of ${recordText(step.record)} (LoopbackRecord)`;
    case 'SetListenerHealthCheckSource':
      return `${step.restore ? 'restore' : 'set'} listener ${step.listenerId}${step.protocol ? ` (${step.protocol}:${step.port})` : ''} of CLB ${step.loadBalancerId}: health-check source ${SOURCE[step.to]}${step.drift ? ' (drift: it had been put back outside loopguard)' : ''}${step.why ? ` directly (${step.why})` : ''}`;
    case 'SetLoadBalancerPassToTarget':
      return `${step.restore ? 'restore' : 'set'} CLB ${step.loadBalancerId} LoadBalancerPassToTarget: ${String(step.to)}${step.why ? ` directly (${step.why})` : ''}`;
    case 'AnnotateTarget': {
      const parts: string[] = [];
      const text = annotationText(step.set);
      if (text) parts.push(`${step.restore ? 'restore annotation(s) ' : 'annotate '}${text}`);
      if (step.drops) parts.push('delete the LoopbackRecord');
      else if (step.forget?.length) parts.push(`forget ${step.forget.length} restored field(s) in the LoopbackRecord`);
      if (step.kept) parts.push(step.kept);
      if (step.record?.applied?.length) parts.push(`record ${step.record.applied.length} applied field(s) (LoopbackRecord)`);
      else if (step.record) parts.push(`record the originals of ${recordText(step.record)} (LoopbackRecord)`);
      return parts.join('; ');
    }
    case 'DeclareInTkeServiceConfig':
      return `${step.restore ? 'restore in' : 'declare in'} TkeServiceConfig ${step.config}: ${step.edits.map(editText).join('; ')}${step.drift ? ' (drift: the config no longer declared them)' : ''}`;
    case 'RemoveFromTkeServiceConfig':
      return `remove from TkeServiceConfig ${step.config} what loopguard added: ${step.removals.map(removalText).join('; ')}`;
    case 'AwaitTke':
      if (step.reason === 'ConfigCreated') return `wait for TKE to create TkeServiceConfig ${step.config ?? ''}`;
      if (step.reason === 'ConfigApplied') return `wait for TKE to apply TkeServiceConfig ${step.config ?? ''} to CLB ${step.loadBalancerId}${step.graceOver ? ' (grace period over)' : ''}`;
      if (step.reason === 'PassToTargetApplied') return `wait for TKE to apply ingress.cloud.tencent.com/pass-to-target to CLB ${step.loadBalancerId}`;
      if (step.reason === 'VipReleased') return `wait for kube-proxy to release the VIP of CLB ${step.loadBalancerId} (prevent-loopback taken off), then put the health-check sources back on it`;
      if (step.reason === 'SourceSwitched') return `wait for TKE to switch the health-check sources of CLB ${step.loadBalancerId} to 100.64.0.0/10 (its answer to prevent-loopback)`;
      return `wait for TKE to restore the originals on CLB ${step.loadBalancerId}`;
  }
}
