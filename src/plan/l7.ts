// Pure L7 planning (Ingresses): keepalive (and with it SNAT) per l7Listener and the rule health-check source,
// declared in the Ingress's TkeServiceConfig so TKE's ingress controller applies them and its resync keeps them
// (tencent-cloud.md §1). Per round, the steps possible from what is observed now; a step that needs TKE to act first
// ends the plan with an AwaitTke, and a later observation plans the rest. The order of both ways: docs/execution.md
// "Ordering (the preconditions)", its L7 and L7 release.
import { IngressAnnotation, type Annotations } from '../api/annotations.js';
import { type Originals } from '../api/originals.js';
import { StalledReason } from '../api/reasons.js';
import type { ClbFacts } from '../model/facts.js';
import type { TargetError } from '../model/status.js';
import { pendingEdits } from './config-patch.js';
import { desiredEdits, originalsFor, type RejectedCapabilities } from './l7-edits.js';
import { revertPlan } from './l7-revert.js';
import { planPassRelease, planPassToTarget } from './l7-pass.js';
import type { L4TargetInput } from './l4.js';
import { annotatedByLoopguard, isApplied, sameOriginals, tkeGraceOver, type GraceClock } from './originals.js';
import { fieldKey, mergeOriginals, recordedFields, withApplied } from '../api/originals.js';
import type { Step } from './steps.js';

/** The governing TkeServiceConfig as the informer cache has it. */
export interface ConfigView {
  name: string;
  /** undefined: it does not exist (yet). */
  spec?: unknown;
  exists: boolean;
}

export interface L7TargetInput extends L4TargetInput {
  /** The CLB as last read (at `observedAt`). */
  clb?: ClbFacts;
  /** The config the Ingress names (or its auto config); undefined when it names none. */
  config?: ConfigView;
  rejected: RejectedCapabilities;
}

export interface L7Plan {
  steps: Step[];
  error?: TargetError;
}

/** The config that governs an Ingress: the one it names, else its auto config when the auto annotation is on. */
export function governingConfigName(name: string, annotations: Annotations): string | undefined {
  const named = annotations?.[IngressAnnotation.TkeServiceConfig]?.trim();
  if (named) return named;
  if (annotations?.[IngressAnnotation.TkeServiceConfigAuto]?.trim().toLowerCase() === 'true') return `${name}-auto-ingress-config`;
  return undefined;
}

/** Steps for an Ingress the policy manages and wants something of (planTarget releases one it wants nothing of). */
export function planL7Target(input: L7TargetInput): L7Plan {
  const a = input.assessment;
  const desired = a.desired?.layer === 'L7' ? a.desired : undefined;
  if (!desired) return { steps: [] };
  const originals = input.originals;
  const onTarget = input.owned ? originals : undefined;
  const edits = desiredEdits(desired, originals, input.rejected);
  const pass = planPassToTarget({ ...input, desired, originals });
  // The CLB must let 100.127/16 in before keepalive makes the nodes see it: the rest waits for TKE.
  if (pass.at(-1)?.kind === 'AwaitTke') return { steps: pass };
  const passWanted = pass.length > 0;
  const vip = input.clb?.vips?.[0];
  const steps: Step[] = [];
  const ref = desired.tkeServiceConfig;
  // Every record names the CLB its entries came from (restores go there, whatever the annotation says later).
  const passRecord: Originals = { v: 1, loadBalancerId: desired.loadBalancerId };
  const recordThen = (add: Originals, then: Step[]): void => {
    const merged = mergeOriginals(originals, mergeOriginals(add, passRecord));
    if (!sameOriginals(merged, onTarget)) steps.push({ kind: 'RecordOriginals', originals: merged });
    steps.push(...pass, ...then);
  };

  if (ref.source === 'ToBeCreated') {
    if (passWanted) recordThen({ v: 1 }, []);
    if (edits.length > 0) {
      const auto = IngressAnnotation.TkeServiceConfigAuto;
      const base = passWanted ? mergeOriginals(originals, passRecord) : (originals ?? { v: 1 as const });
      steps.push({ kind: 'AnnotateTarget', set: { [auto]: 'true' }, originals: mergeOriginals(base, { v: 1, annotations: { [auto]: input.annotations?.[auto] ?? null }, loadBalancerId: desired.loadBalancerId }) });
      // TKE is asked now: its grace period starts here (later rounds' waits keep this start, tke-wait.ts WaitClock).
      steps.push({ kind: 'AwaitTke', reason: 'ConfigCreated', loadBalancerId: desired.loadBalancerId, config: ref.name, since: input.now.toISOString() });
    }
    return { steps };
  }
  const config = input.config;
  if (edits.length > 0 && (!config || !config.exists)) {
    if (passWanted) recordThen({ v: 1 }, []);
    if (ref.source === 'Auto') {
      steps.push({ kind: 'AwaitTke', reason: 'ConfigCreated', loadBalancerId: desired.loadBalancerId, config: ref.name });
      return { steps };
    }
    return {
      steps,
      error: {
        reason: StalledReason.TargetMisconfigured,
        message: `TkeServiceConfig ${ref.name} named by ${IngressAnnotation.TkeServiceConfig} does not exist: create it or remove the annotation`,
        permanent: true,
      },
    };
  }
  // The fields the config does not hold as wanted yet: what DeclareInTkeServiceConfig patches.
  const todo = config ? pendingEdits(config.spec, edits, vip) : [];
  if (config && todo.length > 0) {
    const drift = todo.some((e) => {
      const l = desired.listeners.find((x) => x.protocol.toUpperCase() === e.protocol.toUpperCase() && x.port === e.port);
      if (!l) return false;
      if (e.kind === 'keepalive') return isApplied(originals, fieldKey.keepalive(l.listenerId));
      const r = l.rules.find((x) => x.domain === e.domain && x.url === e.url);
      return r !== undefined && isApplied(originals, fieldKey.ruleSource(l.listenerId, r.locationId));
    });
    const declaredAt = input.now.toISOString();
    recordThen({ ...originalsFor(desired, edits, { spec: config.spec, vip }), declaredAt }, [
      { kind: 'DeclareInTkeServiceConfig', config: config.name, loadBalancerId: desired.loadBalancerId, ...(vip ? { vip } : {}), edits: todo, ...(drift ? { drift: true } : {}) },
      { kind: 'AwaitTke', reason: 'ConfigApplied', loadBalancerId: desired.loadBalancerId, config: config.name, since: declaredAt, wantsKeepalive: todo.some((e) => e.kind === 'keepalive' && e.value === 1) },
    ]);
    return { steps };
  }
  if (passWanted) recordThen({ v: 1 }, []);

  // Everything is declared: wait until the CLB shows it, then record what took effect.
  const pending = a.changes.filter((c) => c.action === 'SetListenerKeepalive' || c.action === 'SetRuleHealthCheckSource');
  if (pending.length > 0 && config) {
    // The grace period is for TKE applying what loopguard declared: only this policy's own record says when, and
    // never later than now. A field that had taken effect before and is off now was changed on the CLB: TKE's
    // resync puts it back, and no grace period runs out on it (it says nothing about the account's capability).
    const declared = input.owned && originals?.declaredAt ? Math.min(Date.parse(originals.declaredAt), input.now.getTime()) : undefined;
    const since = declared !== undefined && !Number.isNaN(declared) ? new Date(declared).toISOString() : undefined;
    const firstTime = pending.some((c) =>
      c.action === 'SetListenerKeepalive' ? !isApplied(originals, fieldKey.keepalive(c.listenerId)) : !isApplied(originals, fieldKey.ruleSource(c.listenerId, c.locationId)),
    );
    const graceOver = firstTime && tkeGraceOver(since, input);
    steps.push({
      kind: 'AwaitTke',
      reason: 'ConfigApplied',
      loadBalancerId: desired.loadBalancerId,
      config: config.name,
      // A drift's wait starts when the executor first sees it (tke-wait.ts), not at the declaration long ago.
      ...(since && firstTime ? { since } : {}),
      ...(graceOver ? { graceOver: true } : {}),
      wantsKeepalive: pending.some((c) => c.action === 'SetListenerKeepalive'),
    });
    return { steps };
  }
  if (!originals || !input.owned) return { steps };
  const took: string[] = [];
  for (const l of desired.listeners) {
    if (l.desiredKeepalive !== undefined && l.currentKeepalive === l.desiredKeepalive) took.push(fieldKey.keepalive(l.listenerId));
    for (const r of l.rules) {
      if (r.desiredSourceIpType !== undefined && r.currentSourceIpType === r.desiredSourceIpType) took.push(fieldKey.ruleSource(l.listenerId, r.locationId));
    }
  }
  if (desired.passToTarget.desired === true && desired.passToTarget.current === true) took.push(fieldKey.passToTarget());
  const final = withApplied(originals, [...(originals.applied ?? []), ...took]);
  if (!sameOriginals(final, originals)) steps.push({ kind: 'AnnotateTarget', set: {}, originals: final });
  return { steps };
}

export type L7ReleaseInput = Pick<L7TargetInput, 'annotations' | 'clb' | 'config' | 'vipBound' | keyof GraceClock> & { originals: Originals };

/**
 * Steps that give back an Ingress's recorded originals. With the config gone, or TKE not syncing the Ingress
 * (`mode: skip`), nothing can carry the originals to the CLB: the release does not wait for it (it would wait
 * forever) and drops the record.
 */
export function planL7Release(input: L7ReleaseInput): L7Plan {
  const { originals, annotations, config } = input;
  // A CLB other than the one the originals came from (the user-writable id changed) is never written to.
  const clb = originals.loadBalancerId && input.clb?.loadBalancerId !== originals.loadBalancerId ? undefined : input.clb;
  // The rule sources a bound VIP keeps on 100.64.0.0/10 leave the record (`rest`): their originals are forgotten, and
  // loopguard's declaration of them stays in the config (taking it out could let TKE put the VIP back on a bound VIP).
  const rules = input.vipBound && originals.rules ? Object.fromEntries(Object.entries(originals.rules).filter(([, r]) => r.sourceIpType !== 0)) : originals.rules;
  const rest = { ...originals, rules };
  const kept = Object.keys(originals.rules ?? {}).length - Object.keys(rules ?? {}).length;
  const plan = revertPlan(rest, (clb?.listeners ?? []).filter((l) => l.protocol === 'HTTP' || l.protocol === 'HTTPS'));
  const vip = clb?.vips?.[0];
  const lbId = clb?.loadBalancerId ?? '';
  const steps: Step[] = [];
  const configLive = config?.exists === true;
  if (plan.edits.length > 0 && configLive) {
    const todo = pendingEdits(config.spec, plan.edits, vip);
    if (todo.length > 0) steps.push({ kind: 'DeclareInTkeServiceConfig', config: config.name, loadBalancerId: lbId, ...(vip ? { vip } : {}), edits: todo, restore: true });
  }
  const tkeSkips = annotations?.[IngressAnnotation.Mode]?.trim().toLowerCase() === 'skip';
  const pass = planPassRelease({ ...input, current: clb?.passToTarget, loadBalancerId: lbId, tkeSkips });
  steps.push(...pass);
  if (pass.at(-1)?.kind === 'AwaitTke') return { steps };
  if (clb && configLive && !tkeSkips && !plan.restored) {
    steps.push({ kind: 'AwaitTke', reason: 'OriginalsApplied', loadBalancerId: lbId, ...(config ? { config: config.name } : {}) });
    return { steps };
  }
  if (plan.removals.length > 0 && configLive) {
    steps.push({ kind: 'RemoveFromTkeServiceConfig', config: config.name, loadBalancerId: lbId, ...(vip ? { vip } : {}), removals: plan.removals });
  }
  const set: Record<string, string | null> = {};
  const auto = IngressAnnotation.TkeServiceConfigAuto;
  if (annotatedByLoopguard(originals, auto)) set[auto] = originals.annotations?.[auto] ?? null;
  if (annotatedByLoopguard(originals, IngressAnnotation.PassToTarget)) set[IngressAnnotation.PassToTarget] = originals.annotations?.[IngressAnnotation.PassToTarget] ?? null;
  steps.push({ kind: 'AnnotateTarget', set, forget: recordedFields(originals), drops: true, restore: true, ...(kept > 0 && input.vipBound ? { kept: `${kept} rule source(s) ${input.vipBound}` } : {}) });
  return { steps };
}
