// What `npm run demo` shows of each target's CLB, read as an operator's user would check it: listeners and rules
// through the unmodified cloud SDK (DescribeListeners: health-check source, keepalive; DescribeTargetHealth: the
// backends' health), the Service's prevent-loopback annotation through kubectl, and — the one fact no API shows —
// whether the simulated kube-proxy has bound the VIP on the nodes (the CLB emulator's model: a bound VIP drops
// health checks whose source is the VIP, so those backends are Dead; sim/clb-emulator/health.ts).
import { Client } from 'tencentcloud-sdk-nodejs/tencentcloud/services/clb/v20180317/clb_client.js';
import { ClbAdminClient } from '../sim/clb-emulator/admin-client.js';

export interface DemoEnv {
  endpoint: string;
  region: string;
  secretId: string;
  secretKey: string;
}

export interface DemoTarget {
  kind: 'Service' | 'Ingress';
  name: string;
  loadBalancerId: string;
  annotations: Record<string, string>;
  /** An Ingress's paths (spec.rules[].http.paths): TKE makes one CLB rule per path on each of its listeners. */
  paths?: number;
}

/** One target's state as labelled facts, in display order: the demo prints how each one changes. */
export type Facts = Array<[label: string, value: string]>;

const PREVENT_LOOPBACK = 'service.cloud.tencent.com/prevent-loopback';
const SOURCE: Record<number, string> = { 0: 'VIP (0)', 1: '100.64.0.0/10 (1)' };
const source = (n: number | undefined): string => SOURCE[n ?? 0] ?? String(n);

export class ClbReader {
  private readonly sdk: Client;
  private readonly admin: ClbAdminClient;

  constructor(env: DemoEnv) {
    this.sdk = new Client({
      credential: { secretId: env.secretId, secretKey: env.secretKey },
      region: env.region,
      profile: { httpProfile: { protocol: 'http://', endpoint: env.endpoint } },
    });
    this.admin = new ClbAdminClient(`http://${env.endpoint}`);
  }

  async facts(target: DemoTarget): Promise<Facts> {
    const id = target.loadBalancerId;
    const facts: Facts = [];
    const { Listeners = [] } = await this.sdk.DescribeListeners({ LoadBalancerId: id });
    for (const l of [...Listeners].sort((a, b) => (a.Port ?? 0) - (b.Port ?? 0))) {
      const name = `${l.Protocol}:${l.Port}`;
      if (l.Protocol === 'HTTP' || l.Protocol === 'HTTPS') {
        facts.push([`${name} keepalive`, l.KeepaliveEnable === 1 ? 'on (1)' : 'off (0)']);
        for (const r of l.Rules ?? []) facts.push([`${name} ${r.Domain}${r.Url} health-check source`, source(r.HealthCheck?.SourceIpType)]);
      } else {
        facts.push([`${name} health-check source`, source(l.HealthCheck?.SourceIpType)]);
      }
    }
    if (target.kind === 'Service') {
      facts.push(['prevent-loopback annotation', target.annotations[PREVENT_LOOPBACK] === undefined ? 'absent' : `"${target.annotations[PREVENT_LOOPBACK]}"`]);
      const nodes = (await this.admin.getLoadBalancer(id)).nodes;
      const bound = nodes.filter((n) => n.vipBound).length;
      facts.push(['VIP bound by kube-proxy (simulated)', bound === 0 ? 'no' : bound === nodes.length ? 'yes, every node' : `${bound} of ${nodes.length} nodes`]);
    }
    facts.push(['backends (DescribeTargetHealth)', await this.health(id)]);
    return facts;
  }

  /** "6 Alive" or "4 Alive, 2 Dead": every backend of every listener and rule, by HealthStatusDetail. */
  private async health(id: string): Promise<string> {
    const { LoadBalancers = [] } = await this.sdk.DescribeTargetHealth({ LoadBalancerIds: [id] });
    const counts = new Map<string, number>();
    for (const lb of LoadBalancers) {
      for (const l of lb.Listeners ?? []) {
        for (const r of l.Rules ?? []) {
          for (const t of r.Targets ?? []) {
            const detail = t.HealthStatusDetail ?? (t.HealthStatus ? 'Alive' : 'Dead');
            counts.set(detail, (counts.get(detail) ?? 0) + 1);
          }
        }
      }
    }
    return counts.size === 0 ? 'none' : [...counts].map(([detail, n]) => `${n} ${detail}`).join(', ');
  }
}

/**
 * Whether TKE has finished building the target's CLB: every L7 listener has a rule per path of the Ingress. TKE
 * creates an Ingress's listener before its rules, so a snapshot taken in between would miss a rule that Enforce
 * later changes and the revert then shows it as "not restored".
 */
export function built(target: DemoTarget, facts: Facts): boolean {
  const listeners = facts.filter(([label]) => label.endsWith(' keepalive')).map(([label]) => label.slice(0, -' keepalive'.length));
  // An Ingress with paths has an L7 listener once TKE has built anything: none yet is not built.
  if ((target.paths ?? 0) > 0 && listeners.length === 0) return false;
  return listeners.every((l) => facts.filter(([label]) => label.startsWith(`${l} `) && label.endsWith(' health-check source')).length === (target.paths ?? 0));
}

/** The facts of `after` beside those of `before`: `label: before → after`, or `label: value (unchanged)`. */
export function describeChanges(before: Facts, after: Facts): string[] {
  const old = new Map(before);
  return after.map(([label, value]) => {
    const was = old.get(label);
    return was === undefined || was === value ? `${label}: ${value}${was === undefined ? '' : ' (unchanged)'}` : `${label}: ${was} → ${value}`;
  });
}

/** The facts that differ between two states (empty: the same). */
export function differences(a: Facts, b: Facts): string[] {
  const [one, other] = [new Map(a), new Map(b)];
  const labels = new Set([...one.keys(), ...other.keys()]);
  return [...labels].filter((l) => one.get(l) !== other.get(l)).map((l) => `${l}: ${one.get(l) ?? '—'} vs ${other.get(l) ?? '—'}`);
}
