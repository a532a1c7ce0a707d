// Pure: reading TKE's own verdict on a TkeServiceConfig edit. TKE's ingress controller (l7-lb-controller)
// reports a CLB write it could not make as a Warning Event on the Ingress, quoting the CLB error
// (`SyncLoadBalancerFailed`, "… failed: Code=FailedOperation, Message=KeepaliveEnable/SnatEnable requires …").
import type { TargetKind } from '../api/loopbackpolicy.js';
import { lastSeen, type EventTimes } from '../kube/events.js';

export const TKE_INGRESS_COMPONENT = 'l7-lb-controller';
/** TKE's Service controller (its Events on a Service: `SyncLoadBalancerFailed`, …). */
export const TKE_SERVICE_COMPONENT = 'tke-service-controller';

export interface EventView extends EventTimes {
  type?: string;
  reason?: string;
  message?: string;
  source?: { component?: string };
  reportingComponent?: string;
}

/**
 * The newest Warning Event from TKE's controller of `kind` (the ingress controller by default) at or after `sinceMs`
 * (second precision: allow slack).
 */
export function latestTkeWarning(events: readonly EventView[], sinceMs: number, kind: TargetKind = 'Ingress'): EventView | undefined {
  // A Gateway's CLB is its generated Service's, which TKE's service controller syncs.
  const wanted = kind === 'Ingress' ? TKE_INGRESS_COMPONENT : TKE_SERVICE_COMPONENT;
  const warnings = events.filter((e) => e.type === 'Warning' && (e.source?.component ?? e.reportingComponent) === wanted && lastSeen(e) >= sinceMs);
  return warnings.reduce<EventView | undefined>((best, e) => (!best || lastSeen(e) >= lastSeen(best) ? e : best), undefined);
}

/** CLB's refusal for lack of the L7 SNAT + keepalive capability (FailedOperation "KeepaliveEnable/SnatEnable requires …"). */
export function isKeepaliveCapabilityError(message: string | undefined): boolean {
  if (!message) return false;
  return /keepalive/i.test(message) && /(capabilit|ticket|whitelist|not (been )?enabled|FailedOperation)/i.test(message);
}
