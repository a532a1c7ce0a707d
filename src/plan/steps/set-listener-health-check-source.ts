// SetListenerHealthCheckSource: ModifyListener with the listener's full HealthCheck, only SourceIpType changed; the
// task is awaited. Its effect: src/mitigation/steps/set-listener-health-check-source.ts.
import type { SourceIpType } from '../../api/annotations.js';
import type { StepKindPlan } from './kind.js';
import { SOURCE } from './text.js';

export interface SetListenerHealthCheckSourceStep {
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

export const setListenerHealthCheckSource: StepKindPlan<SetListenerHealthCheckSourceStep> = {
  describe: (step) =>
    `${step.restore ? 'restore' : 'set'} listener ${step.listenerId}${step.protocol ? ` (${step.protocol}:${step.port})` : ''} of CLB ${step.loadBalancerId}: health-check source ${SOURCE[step.to]}${step.drift ? ' (drift: it had been put back outside loopguard)' : ''}${step.why ? ` directly (${step.why})` : ''}`,
  // A listener source put back on the VIP while prevent-loopback stays drops every health check: a harm of
  // loopguard's own making, corrected even in Audit. It needs no record step first.
  maintainedInAudit: (step) => step.drift === true,
};
