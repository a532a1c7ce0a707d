import { randomBytes } from 'node:crypto';
import { lbNotFound, listenerNotFound, locationNotFound } from './errors.js';
import type { ListenerRecord, LoadBalancerRecord, NodeRecord, RuleRecord } from './model.js';

/** `YYYY-MM-DD HH:mm:ss` in Beijing time, the format and zone CLB uses for CreateTime. */
export function clbTime(ms: number): string {
  return new Date(ms + 8 * 3600_000).toISOString().replace('T', ' ').slice(0, 19);
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Ids look like the real ones (`lb-` + 8 lowercase alphanumerics) so id-shape validation in clients is exercised. */
export function newId(prefix: 'lb' | 'lbl' | 'loc' | 'ins'): string {
  const bytes = randomBytes(8);
  let s = '';
  for (const b of bytes) s += ID_ALPHABET[b % ID_ALPHABET.length];
  return `${prefix}-${s}`;
}

/** Three nodes by default; 10.0.1.0/24 does not overlap the VIP pools below. */
export function defaultNodes(): NodeRecord[] {
  return [1, 2, 3].map((n) => ({ ip: `10.0.1.${n}`, instanceId: `ins-node000${n}`, vipBound: false }));
}

/**
 * All CLBs of the one emulated account/region. VIPs are in-memory strings only — never contacted: INTERNAL CLBs
 * get 10.100.x.y, OPEN CLBs 203.0.113.x / 198.51.100.x (documentation ranges, public-looking but unroutable),
 * IPv6 CLBs 2001:db8::/32 (documentation prefix).
 */
export class ClbStore {
  private readonly lbs = new Map<string, LoadBalancerRecord>();
  private seq = 0;
  private vipCounter = 0;

  clear(): void {
    this.lbs.clear();
    this.seq = 0;
    this.vipCounter = 0;
  }

  nextSeq(): number {
    return ++this.seq;
  }

  allocateVip(kind: 'INTERNAL' | 'OPEN' | 'IPV6'): string {
    const n = ++this.vipCounter;
    if (kind === 'IPV6') return `2001:db8::c1b:${n.toString(16)}`;
    if (kind === 'INTERNAL') return `10.100.${Math.floor(n / 250)}.${(n % 250) + 2}`;
    return n < 250 ? `203.0.113.${n + 2}` : `198.51.100.${(n % 250) + 2}`;
  }

  all(): LoadBalancerRecord[] {
    return [...this.lbs.values()];
  }

  has(id: string): boolean {
    return this.lbs.has(id);
  }

  find(id: string): LoadBalancerRecord | undefined {
    return this.lbs.get(id);
  }

  add(lb: LoadBalancerRecord): void {
    this.lbs.set(lb.LoadBalancerId, lb);
  }

  remove(id: string): void {
    this.lbs.delete(id);
  }

  /** Throws `InvalidParameter.LBIdNotFound`. */
  lb(id: string): LoadBalancerRecord {
    const lb = this.lbs.get(id);
    if (!lb) throw lbNotFound(id);
    return lb;
  }

  /** Throws `InvalidParameter.ListenerIdNotFound`. */
  listener(lb: LoadBalancerRecord, listenerId: string): ListenerRecord {
    const listener = lb.Listeners.find((l) => l.ListenerId === listenerId);
    if (!listener) throw listenerNotFound(listenerId);
    return listener;
  }

  /** Throws `InvalidParameter.LocationNotFound`. */
  rule(listener: ListenerRecord, locationId: string): RuleRecord {
    const rule = listener.Rules.find((r) => r.LocationId === locationId);
    if (!rule) throw locationNotFound(locationId);
    return rule;
  }
}
