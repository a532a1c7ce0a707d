// Whether the CLB a target names is the target's own. The id comes from an annotation that anyone with `edit` on
// the target can overwrite, so before any verdict that leads to a write loopguard checks it against what a
// namespace user cannot write (issue 15 #1, docs/security.md):
//  - the CLB's tags, which only the cloud account sets: TKE tags a CLB it creates for a Service with
//    `tke-lb-serviceuuid: <Service uid>` and one for an Ingress with `tke-lb-ingress-uuid: <Ingress uid>` (TKE docs
//    "Service 使用已有 CLB" and 457/45685; sim/README.md);
//  - the target's status (`status.loadBalancer.ingress[].ip`), which TKE's controller writes through the status
//    subresource that the `edit` role does not grant.
// A CLB without an owner tag (one the user brought with `tke-existed-lbid`, or a cluster that shares CLBs) must
// carry the status VIP. A mismatch is a ForeignClb verdict: reported with a Warning Event, never written to.
// The message of a Foreign verdict reaches an Event and the status in the target's namespace, where whoever forged the
// id reads it: it says only that the CLB belongs to another object, never that object's uid, kind or the CLB's
// addresses (issue 22 #9: otherwise it is an oracle for probing other tenants' CLB ids).
import type { ClbFacts, IngressFacts, ServiceFacts } from './facts.js';

/** The objects TKE makes CLBs for (a Gateway's is its generated Service's). */
type ClbOwner = ServiceFacts | IngressFacts;

export const OWNER_TAG = { Service: 'tke-lb-serviceuuid', Ingress: 'tke-lb-ingress-uuid' } as const;

export type ClbOwnership = { state: 'Own'; by: 'tag' | 'vip' } | { state: 'Foreign'; why: string } | { state: 'Unverified'; why: string };

/** What a Foreign verdict says, whichever check failed: nothing about the object that owns the CLB. */
function foreign(id: string, target: ClbOwner, check: string): ClbOwnership {
  return { state: 'Foreign', why: `CLB ${id} belongs to another object, which loopguard will not touch (${check} this ${target.kind})` };
}

export function clbOwnership(target: ClbOwner, clb: ClbFacts): ClbOwnership {
  const tags = clb.tags ?? {};
  const id = clb.loadBalancerId;
  const otherTag = tags[OWNER_TAG[target.kind === 'Service' ? 'Ingress' : 'Service']];
  const ownTag = tags[OWNER_TAG[target.kind]];
  // An owner tag of the other kind, or of this kind for another uid: TKE made the CLB for another object.
  if (otherTag !== undefined || (ownTag !== undefined && (!target.uid || ownTag !== target.uid))) return foreign(id, target, 'its owner tag does not name');
  if (ownTag !== undefined) return { state: 'Own', by: 'tag' };
  const addresses = new Set([...(clb.vips ?? []), ...(clb.ipv6Address ? [clb.ipv6Address] : [])]);
  const published = target.loadBalancerIps ?? [];
  if (published.length === 0) {
    return { state: 'Unverified', why: `CLB ${id} has no owner tag and TKE has not published its VIP in the ${target.kind}'s status yet` };
  }
  if (published.some((ip) => addresses.has(ip))) return { state: 'Own', by: 'vip' };
  return foreign(id, target, 'none of its addresses is in the status of');
}
