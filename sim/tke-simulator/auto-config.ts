// The `<name>-auto-service-config` / `<name>-auto-ingress-config` TKE keeps in step with the CLB
// (docs/tencent-cloud.md §1 "Auto-created config": fragments are added for new listeners/rules and removed for
// gone ones; user edits to existing fragments are kept). Pure.
import type { Listener, RuleOutput } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_models.js';
import { mirrorHealthCheck } from './health-check.js';
import type {
  TkeL4Listener,
  TkeL7Domain,
  TkeL7Listener,
  TkeL7Rule,
  TkeServiceConfigSpec,
  TkeSession,
} from './tke-service-config.js';

const isL4 = (l: Listener): boolean => l.Protocol === 'TCP' || l.Protocol === 'UDP';
const isL7 = (l: Listener): boolean => l.Protocol === 'HTTP' || l.Protocol === 'HTTPS';
const byPort = (a: { port: number }, b: { port: number }): number => a.port - b.port;

export const sameListener = (f: { protocol: string; port: number }, l: Listener): boolean =>
  f.protocol.toUpperCase() === l.Protocol && f.port === l.Port;

/** Config domain "" (or the VIP itself) means the CLB's default domain, whose CLB rule Domain is the VIP. */
export function configDomainOf(rule: RuleOutput, vip: string): string {
  return rule.Domain === vip ? '' : (rule.Domain ?? '');
}

export const sameDomain = (configDomain: string | undefined, rule: RuleOutput, vip: string): boolean => {
  const d = (configDomain ?? '').toLowerCase();
  const r = (rule.Domain ?? '').toLowerCase();
  return d === r || (d === '' && r === vip.toLowerCase());
};

function mirrorSession(expire: number | undefined): TkeSession {
  return expire && expire > 0 ? { enable: true, sessionExpireTime: expire } : { enable: false };
}

export function mirrorL4Listener(l: Listener, forceSourceIpType?: number): TkeL4Listener {
  const healthCheck = mirrorHealthCheck(l.HealthCheck, false);
  if (forceSourceIpType !== undefined) healthCheck.sourceIpType = forceSourceIpType;
  return {
    protocol: l.Protocol ?? 'TCP',
    port: l.Port ?? 0,
    healthCheck,
    scheduler: l.Scheduler ?? 'WRR',
    session: mirrorSession(l.SessionExpireTime),
  };
}

export function mirrorL7Rule(r: RuleOutput): TkeL7Rule {
  return {
    url: r.Url ?? '/',
    forwardType: r.ForwardType ?? 'HTTP',
    healthCheck: mirrorHealthCheck(r.HealthCheck, true),
    scheduler: r.Scheduler ?? 'WRR',
    session: mirrorSession(r.SessionExpireTime),
  };
}

/** L7 fragment: existing rule fragments survive while their rule exists; new rules get a mirrored fragment. */
export function mergeL7Listener(existing: TkeL7Listener | undefined, l: Listener, vip: string): TkeL7Listener {
  const domains: TkeL7Domain[] = [];
  for (const rule of l.Rules ?? []) {
    const domain = configDomainOf(rule, vip);
    let target = domains.find((d) => (d.domain ?? '').toLowerCase() === domain.toLowerCase());
    if (!target) {
      const old = existing?.domains?.find((d) => sameDomain(d.domain, rule, vip));
      target = { ...(old ?? {}), domain, rules: [] };
      domains.push(target);
    }
    const oldDomain = existing?.domains?.find((d) => sameDomain(d.domain, rule, vip));
    const oldRule = oldDomain?.rules?.find((r) => r.url === rule.Url);
    (target.rules ??= []).push(oldRule ?? mirrorL7Rule(rule));
  }
  const base: TkeL7Listener = existing ?? { protocol: l.Protocol ?? 'HTTP', port: l.Port ?? 0, keepaliveEnable: l.KeepaliveEnable ?? 0 };
  const { domains: _dropped, ...rest } = base;
  return domains.length > 0 ? { ...rest, domains } : rest;
}

export interface AutoConfigInput {
  listeners: Listener[];
  vip: string;
  /** Newer TKE with prevent-loopback switches L4 health-check sources to 1 and records it in the config. */
  forceL4SourceIpType?: number;
}

/**
 * The auto config's spec for the CLB's current listeners, starting from the existing spec (undefined on
 * creation). Unknown top-level fields and user edits to surviving fragments are preserved.
 */
export function mergeAutoConfigSpec(existing: TkeServiceConfigSpec | undefined, input: AutoConfigInput): TkeServiceConfigSpec {
  const lb = existing?.loadBalancer ?? {};
  const l4: TkeL4Listener[] = input.listeners.filter(isL4).map((l) => {
    const old = lb.l4Listeners?.find((f) => sameListener(f, l));
    if (!old) return mirrorL4Listener(l, input.forceL4SourceIpType);
    if (input.forceL4SourceIpType === undefined) return old;
    // TKE's own fragments carry `enable` (docs/tencent-cloud.md §1): a removed healthCheck comes back mirrored.
    return { ...old, healthCheck: { ...(old.healthCheck ?? mirrorHealthCheck(l.HealthCheck, false)), sourceIpType: input.forceL4SourceIpType } };
  });
  const l7: TkeL7Listener[] = input.listeners
    .filter(isL7)
    .map((l) => mergeL7Listener(lb.l7Listeners?.find((f) => sameListener(f, l)), l, input.vip));
  const { l4Listeners: _l4, l7Listeners: _l7, ...lbRest } = lb;
  return {
    ...(existing ?? {}),
    loadBalancer: {
      ...lbRest,
      ...(l4.length > 0 ? { l4Listeners: l4.sort(byPort) } : {}),
      ...(l7.length > 0 ? { l7Listeners: l7.sort(byPort) } : {}),
    },
  };
}
