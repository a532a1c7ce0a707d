// SetListenerHealthCheckSource (src/plan/steps/set-listener-health-check-source.ts) carried out: ModifyListener.
import { EventReason } from '../../api/reasons.js';
import { describeCloudError } from '../../cloud/index.js';
import type { RawListener } from '../../cloud/clb-observer.js';
import { healthCheckFor } from '../../plan/l4.js';
import type { SetListenerHealthCheckSourceStep } from '../../plan/steps/set-listener-health-check-source.js';
import { DONE, FRESH_BEFORE_WRITE_MS, writeOptions, writeOrForget, type StepEffect } from './effect.js';

function sourceOf(l: RawListener | undefined): 0 | 1 {
  return l?.healthCheck?.SourceIpType === 1 ? 1 : 0;
}

export const setListenerHealthCheckSource: StepEffect<SetListenerHealthCheckSourceStep> = {
  async apply(deps, _owner, _target, step, signal) {
    const { clb, observer } = deps;
    const lbId = step.loadBalancerId;
    // A restore reads fresh (it may come long after the last observation), and so does a switch TKE was asked to
    // make (its grace period is over, but TKE may be acting right now: a listener it switched since the
    // observation is not written twice); any other switch uses the observation just made, if it was made just now
    // (the struct goes back whole: under CLB's reset model an old one would undo a user's later health-check edits).
    const observedAt = observer.observedAt(lbId);
    const recent = observedAt !== undefined && Date.now() - observedAt <= FRESH_BEFORE_WRITE_MS;
    let raw: readonly RawListener[] | undefined = step.restore || step.why || !recent ? undefined : observer.rawListeners(lbId);
    let listener = raw?.find((l) => l.listenerId === step.listenerId);
    if (!listener) {
      try {
        raw = await clb.describeListeners(lbId, { signal });
      } catch (err) {
        // A CLB that is gone has nothing left to restore.
        if (step.restore && describeCloudError(err).reason === 'ClbNotFound') return DONE;
        throw err;
      }
      listener = raw.find((l) => l.listenerId === step.listenerId);
    }
    if (!listener) {
      if (step.restore) return DONE; // the listener is gone: nothing left to restore
      return { status: 'failed', error: { reason: 'ListenerNotFound', message: `listener ${step.listenerId} of CLB ${lbId} is gone; reading the CLB again`, permanent: false } };
    }
    if (step.why && sourceOf(listener) === step.to) {
      // TKE switched it after the round's read: its change, not loopguard's. The plan's next steps would record it
      // as loopguard's (restored on revert, even under the user's own prevent-loopback): plan again instead.
      observer.invalidate(lbId);
      return { status: 'superseded', note: `TKE switched listener ${step.listenerId} of CLB ${lbId} meanwhile; planning again from a fresh read` };
    }
    const struct = listener;
    if (sourceOf(listener) !== step.to) await writeOrForget(deps, lbId, () => clb.modifyListenerHealthCheck(lbId, step.listenerId, healthCheckFor(struct, step.to), writeOptions(deps, signal)));
    observer.listenerSourceWritten(lbId, step.listenerId, step.to);
    if (step.to === 1) deps.capabilities.forget('range100_64Rejected');
    return DONE;
  },
  event(step) {
    if (step.restore) return { type: 'Normal', reason: EventReason.OriginalsRestored };
    if (step.drift) return { type: 'Warning', reason: EventReason.DriftCorrected };
    return { type: 'Normal', reason: EventReason.HealthCheckSourceSwitched };
  },
  driftCorrection: (step) => (step.drift ? 'ListenerHealthCheckSource' : undefined),
};
