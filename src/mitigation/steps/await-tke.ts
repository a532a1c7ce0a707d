// AwaitTke (src/plan/steps/await-tke.ts) carried out: verification of what TKE was asked to do. TKE's own Warning
// Event or the grace period ends the wait (../tke-wait.ts); no Event of loopguard's own.
import { TKE_GRACE_MS } from '../../model/tke-timing.js';
import type { AwaitTkeStep } from '../../plan/steps/await-tke.js';
import type { EventView } from '../tke-events.js';
import { judgeWait } from '../tke-wait.js';
import type { StepEffect } from './effect.js';

export const awaitTke: StepEffect<AwaitTkeStep> = {
  async apply(deps, _owner, target, step, signal) {
    const now = Date.now();
    // The config is read from the informer (as fresh as now); everything else from the CLB read the plan was made on.
    const observedAtMs = step.reason === 'ConfigCreated' ? now : deps.observer.observedAt(step.loadBalancerId);
    // Each wait ends with a fresh read of the CLB at the next round.
    deps.observer.invalidate(step.loadBalancerId);
    // Without a clock (EffectDeps built by hand), a wait without `since` ends only by TKE's Warning.
    const sinceMs = deps.waits?.since(target, step, now) ?? (step.since ? Math.min(Date.parse(step.since), now) : now);
    let events: EventView[] = [];
    if (!signal.aborted) events = (await deps.writer.eventsOf(target.kind, target.namespace, target.name)) as EventView[];
    const verdict = judgeWait({ step, target, events, sinceMs, observedAtMs, nowMs: now, graceMs: deps.tkeGraceMs ?? TKE_GRACE_MS });
    if (verdict.status === 'waiting') return { ...verdict, since: sinceMs };
    if (verdict.keepaliveRejected) deps.capabilities.learn('keepaliveRejected', verdict.keepaliveRejected);
    return { status: 'failed', error: verdict.error };
  },
  event: () => undefined,
};
