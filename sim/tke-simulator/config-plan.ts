// Which CLB writes make the CLB match what a TkeServiceConfig declares (docs/tencent-cloud.md §1 sync
// behaviour): listeners without a fragment, and attributes a fragment does not declare, are never modified;
// protocol/port/domain/url only select. With sync scope `all` (§9 #2) TKE's own L4 listeners also get their
// whole health check put back to TKE's view. Pure: returns requests, the caller sends them.
import type {
  HealthCheck,
  Listener,
  ModifyListenerRequest,
  ModifyRuleRequest,
} from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import { sameDomain, sameListener } from './auto-config.js';
import type { MissingEnableReading } from './health-check-enable.js';
import { declaredHealthCheck, fullHealthCheck, healthCheckDiffers, healthCheckIsNot, tkeL4HealthCheck } from './health-check.js';
import type { TkeServiceConfigSpec, TkeSession } from './tke-service-config.js';

export type ClbModification =
  | { action: 'ModifyListener'; target: string; request: ModifyListenerRequest }
  | { action: 'ModifyRule'; target: string; request: ModifyRuleRequest };

export interface SyncInput {
  loadBalancerId: string;
  vip: string;
  listeners: Listener[];
  spec: TkeServiceConfigSpec | undefined;
  /** prevent-loopback on newer TKE: L4 health checks must use this source whatever the config says. */
  forceL4SourceIpType?: number;
  /**
   * Sync scope `all`: the L4 listeners TKE made for this Service, whose whole health check is put back to TKE's
   * view (`tkeL4HealthCheck`), and the source the account gives a check nobody chose (0 on IPv6 CLBs).
   */
  ownL4?: { listenerIds: ReadonlySet<string>; accountSourceIpType: number };
  /** How a `healthCheck` without `enable` is read (health-check-enable.ts); default `refused` (never planned then). */
  missingEnable?: MissingEnableReading;
}

/**
 * `session.enable: false` → 0 (off); `enable: true` → `sessionExpireTime`, default 30 s (tencent-cloud.md §1). Some of
 * Tencent's Ingress samples spell the switch `enabled` (§9 #10): read as well, `enable` winning if both are set.
 */
export function sessionExpireTime(session: TkeSession | undefined): number | undefined {
  const enable = typeof session?.enable === 'boolean' ? session.enable : session?.enabled;
  if (!session || typeof enable !== 'boolean') return undefined;
  if (!enable) return 0;
  return typeof session.sessionExpireTime === 'number' ? session.sessionExpireTime : 30;
}

function healthCheckChange(actual: HealthCheck | undefined, declared: HealthCheck): HealthCheck | undefined {
  if (Object.keys(declared).length === 0 || !healthCheckDiffers(actual, declared)) return undefined;
  return fullHealthCheck(actual, declared);
}

/** Scope `all`: TKE's whole view, sent whole (source included, so it does not hinge on CLB's reset model). */
function viewChange(l: Listener, declared: HealthCheck, accountSourceIpType: number): HealthCheck | undefined {
  const view = tkeL4HealthCheck(l.Protocol, declared, accountSourceIpType);
  return healthCheckIsNot(l.HealthCheck, view) ? view : undefined;
}

export function planConfigSync(input: SyncInput): ClbModification[] {
  const out: ClbModification[] = [];
  const lb = input.spec?.loadBalancer;
  for (const l of input.listeners) {
    const where = `${l.Protocol}:${l.Port}`;
    if (l.Protocol === 'TCP' || l.Protocol === 'UDP') {
      const f = lb?.l4Listeners?.find((x) => sameListener(x, l));
      const declared = declaredHealthCheck(f?.healthCheck, input.missingEnable);
      if (input.forceL4SourceIpType !== undefined) declared.SourceIpType = input.forceL4SourceIpType;
      const request: ModifyListenerRequest = { LoadBalancerId: input.loadBalancerId, ListenerId: l.ListenerId ?? '' };
      const own = input.ownL4?.listenerIds.has(l.ListenerId ?? '') ? input.ownL4 : undefined;
      const hc = own ? viewChange(l, declared, own.accountSourceIpType) : healthCheckChange(l.HealthCheck, declared);
      if (hc) request.HealthCheck = hc;
      if (f?.scheduler !== undefined && f.scheduler !== l.Scheduler) request.Scheduler = f.scheduler;
      const session = sessionExpireTime(f?.session);
      if (session !== undefined && session !== (l.SessionExpireTime ?? 0)) request.SessionExpireTime = session;
      if (Object.keys(request).length > 2) out.push({ action: 'ModifyListener', target: where, request });
      continue;
    }
    if (l.Protocol !== 'HTTP' && l.Protocol !== 'HTTPS') continue;
    const f = lb?.l7Listeners?.find((x) => sameListener(x, l));
    if (!f) continue;
    if (typeof f.keepaliveEnable === 'number' && f.keepaliveEnable !== (l.KeepaliveEnable ?? 0)) {
      out.push({
        action: 'ModifyListener',
        target: where,
        request: { LoadBalancerId: input.loadBalancerId, ListenerId: l.ListenerId ?? '', KeepaliveEnable: f.keepaliveEnable },
      });
    }
    for (const rule of l.Rules ?? []) {
      const rf = f.domains?.find((d) => sameDomain(d.domain, rule, input.vip))?.rules?.find((r) => r.url === rule.Url);
      if (!rf) continue;
      const request: ModifyRuleRequest = {
        LoadBalancerId: input.loadBalancerId,
        ListenerId: l.ListenerId ?? '',
        LocationId: rule.LocationId ?? '',
      };
      const hc = healthCheckChange(rule.HealthCheck, declaredHealthCheck(rf.healthCheck, input.missingEnable));
      if (hc) request.HealthCheck = hc;
      if (rf.scheduler !== undefined && rf.scheduler !== rule.Scheduler) request.Scheduler = rf.scheduler;
      const session = sessionExpireTime(rf.session);
      if (session !== undefined && session !== (rule.SessionExpireTime ?? 0)) request.SessionExpireTime = session;
      // ForwardType is only settable on HTTPS listeners (tencent-cloud.md §3 ModifyRule).
      if (l.Protocol === 'HTTPS' && rf.forwardType !== undefined && rf.forwardType !== rule.ForwardType) {
        request.ForwardType = rf.forwardType;
      }
      if (Object.keys(request).length > 3) {
        out.push({ action: 'ModifyRule', target: `${where} ${rule.Domain ?? ''}${rule.Url ?? ''}`, request });
      }
    }
  }
  return out;
}
