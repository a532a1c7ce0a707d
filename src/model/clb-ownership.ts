// Whether the CLB a target names is its own (docs/security.md "The CLB ownership check"): the id is anyone's to write,
// the owner tags and the status VIP are not. A Foreign message never names the owning object or the CLB's addresses
// (issue 22 #9: it would be an oracle for probing other tenants' CLB ids).
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
