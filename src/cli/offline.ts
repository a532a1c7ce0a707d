// Pure: `loopguard plan`'s verdicts without a cluster. A manifest says what TKE will build (a private CLB for a
// Service with an internal-subnetid annotation, a public one otherwise; one listener per port; an Ingress's HTTP and
// HTTPS listeners), but not what the CLB will hold once built: the health-check source (VIP for accounts older than
// 2023-02-24, 100.64.0.0/10 for newer ones: tencent-cloud.md §9 #3), whether a CLB brought with tke-existed-lbid/existLbId is
// private, and keepalive when the TkeServiceConfig lives outside the manifests. Each target is assessed (and planned)
// with the real model once per combination of the facts it leaves open; when the verdicts differ, the report shows
// the most severe and says what it depends on ("AtRisk (VipHealthCheckDropped) if the CLB keeps the VIP
// health-check source; Mitigated (LoopbackPrevented) if it health-checks from 100.64.0.0/10").
import { IngressAnnotation, ServiceAnnotation } from '../api/annotations.js';
import type { LoopbackPolicy } from '../api/loopbackpolicy.js';
import type { ClusterProfile } from '../model/cluster-profile.js';
import { OWNER_TAG } from '../model/clb-ownership.js';
import type { ClbFacts, IngressFacts, ListenerFacts, ServiceFacts } from '../model/facts.js';

/** What manifests hold: Services and Ingresses (a Gateway's Service exists only once Envoy Gateway made it). */
type TargetFacts = ServiceFacts | IngressFacts;
import { targetKey } from '../model/facts.js';
import { SEVERITY } from '../model/verdict-counts.js';
import { ingressFacts, serviceFacts } from '../model/target-facts.js';
import { declaredValue } from '../plan/config-patch.js';
import type { ConfigView } from '../plan/l7.js';
import { NO_SHARING, configLookupOf, configViewOf, sharedView, type ConfigLookup, type SharedView } from '../plan/snapshot.js';
import { TKE_GRACE_MS } from '../model/tke-timing.js';
import { analyzeTarget, NO_POLICY, type Analysis } from './analysis.js';
import type { ManifestSet } from './manifests.js';
import { choosePolicies, DEFAULT_CHOICE, type PolicyChoice } from './policy-spec.js';
import { buildReport, targetReport, type Report, type SourceLocation, type TargetReport } from './report.js';

/** CLB facts pinned by flags (`--health-check-source`, `--keepalive`); undefined: open. */
export interface Pinned {
  healthCheckSource?: 0 | 1;
  keepalive?: 0 | 1;
}

export interface OfflineContext {
  profile: ClusterProfile;
  pinned: Pinned;
  now: Date;
}

type DimKey = 'healthCheckSource' | 'clbType' | 'keepalive';
type Scenario = Record<DimKey, string>;

/** Each open fact: its values, the one to show first (the CLB default, or the riskier), and how to say it. */
const DIMS: Record<DimKey, { label: string; values: readonly string[]; say: Record<string, string> }> = {
  healthCheckSource: {
    label: 'health-check source',
    values: ['VIP', '100.64.0.0/10'],
    say: { VIP: 'the CLB keeps the VIP health-check source', '100.64.0.0/10': 'the CLB health-checks from 100.64.0.0/10' },
  },
  clbType: { label: 'CLB type', values: ['INTERNAL', 'OPEN'], say: { INTERNAL: 'the existing CLB is private', OPEN: 'the existing CLB is public' } },
  keepalive: { label: 'keepalive', values: ['off', 'on'], say: { off: 'keepalive is off on its listeners', on: 'keepalive is on on its listeners' } },
};

export const NEW_CLB = '(new CLB)';
const VIP = '(CLB VIP)';

function existingId(t: TargetFacts): string | undefined {
  const a = t.annotations ?? {};
  const id = t.kind === 'Service' ? (a[ServiceAnnotation.LoadBalancerId] ?? a[ServiceAnnotation.ExistingLoadBalancerId]) : (a[IngressAnnotation.LoadBalancerId] ?? a[IngressAnnotation.ExistingLoadBalancerId]);
  return id?.trim() || undefined;
}

function privateByAnnotation(t: TargetFacts): boolean {
  const key = t.kind === 'Service' ? ServiceAnnotation.InternalSubnetId : IngressAnnotation.SubnetId;
  return (t.annotations?.[key]?.trim() ?? '') !== '';
}

/** The CLB TKE would build (or was given) for the target, under one scenario. */
export function syntheticClb(t: TargetFacts, s: Scenario, uid: string): ClbFacts {
  const source = s.healthCheckSource === '100.64.0.0/10' ? 1 : 0;
  const listeners: ListenerFacts[] =
    t.kind === 'Service'
      ? t.ports
          .filter((p) => p.protocol !== 'SCTP')
          .map((p) => ({ listenerId: `new-${p.protocol}-${p.port}`, protocol: p.protocol, port: p.port, healthCheck: { sourceIpType: source } }))
      : [
          ['HTTP', 80],
          ...(t.tls ? [['HTTPS', 443] as const] : []),
        ].map(([protocol, port]) => ({
          listenerId: `new-${protocol}-${port}`,
          protocol: protocol as string,
          port: port as number,
          keepaliveEnable: s.keepalive === 'on' ? 1 : 0,
          rules: t.rules.flatMap((r) => r.paths.map((path) => ({ locationId: `new-${r.host ?? 'default'}${path}`, domain: r.host ?? VIP, url: path, healthCheck: { sourceIpType: source } }))),
        }));
  return {
    loadBalancerId: existingId(t) ?? NEW_CLB,
    loadBalancerType: s.clbType,
    addressIpVersion: 'IPV4',
    vips: [VIP],
    // TKE's owner tag: the CLB is the target's own (src/model/clb-ownership.ts).
    tags: { [OWNER_TAG[t.kind]]: uid },
    status: 1,
    forward: 1,
    passToTarget: false,
    listeners,
  };
}

/** The facts a target leaves open, each with the values to try (pinned ones fixed). */
function openDims(t: TargetFacts, config: ConfigView | undefined, pinned: Pinned): Partial<Record<DimKey, readonly string[]>> {
  const dims: Partial<Record<DimKey, readonly string[]>> = {};
  dims.clbType = privateByAnnotation(t) ? ['INTERNAL'] : existingId(t) ? DIMS.clbType.values : ['OPEN'];
  dims.healthCheckSource = pinned.healthCheckSource === undefined ? DIMS.healthCheckSource.values : [DIMS.healthCheckSource.values[pinned.healthCheckSource] as string];
  if (t.kind === 'Ingress') {
    if (config?.exists) {
      // What the config declares is what TKE applies; L7 listeners TKE creates have keepalive off otherwise.
      const on = [['HTTP', 80], ...(t.tls ? [['HTTPS', 443] as const] : [])].every(
        ([protocol, port]) => declaredValue(config.spec, { kind: 'keepalive', protocol: protocol as string, port: port as number, value: 1 }, VIP) === 1,
      );
      dims.keepalive = [on ? 'on' : 'off'];
    } else if (config && pinned.keepalive === undefined) dims.keepalive = DIMS.keepalive.values;
    else dims.keepalive = [pinned.keepalive === 1 ? 'on' : 'off'];
  } else dims.keepalive = ['off'];
  return dims;
}

function scenarios(dims: Partial<Record<DimKey, readonly string[]>>): Scenario[] {
  let out: Scenario[] = [{ healthCheckSource: 'VIP', clbType: 'OPEN', keepalive: 'off' }];
  for (const key of Object.keys(dims) as DimKey[]) {
    const values = dims[key] ?? [];
    out = out.flatMap((s) => values.map((v) => ({ ...s, [key]: v })));
  }
  return out;
}

interface Outcome {
  scenario: Scenario;
  analysis: Analysis;
}

/** "AtRisk (VipHealthCheckDropped) if …; Mitigated (LoopbackPrevented) if …", or undefined when all agree. */
export function conditionOf(outcomes: readonly Outcome[], open: readonly DimKey[]): string | undefined {
  const key = (o: Outcome) => `${o.analysis.assessment.verdict} (${o.analysis.assessment.rootCause.id})`;
  const groups = new Map<string, Outcome[]>();
  for (const o of outcomes) groups.set(key(o), [...(groups.get(key(o)) ?? []), o]);
  if (groups.size < 2) return undefined;
  const varying = open.filter((d) => new Set(outcomes.map((o) => o.scenario[d])).size > 1);
  const ordered = [...groups.entries()].sort(([, a], [, b]) => SEVERITY[a[0]!.analysis.assessment.verdict] - SEVERITY[b[0]!.analysis.assessment.verdict]);
  return ordered
    .map(([label, members]) => {
      const shared = varying.filter((d) => new Set(members.map((m) => m.scenario[d])).size === 1).map((d) => DIMS[d].say[members[0]!.scenario[d]] ?? '');
      const when = shared.length > 0 ? shared.join(' and ') : members.map((m) => varying.map((d) => DIMS[d].say[m.scenario[d]]).join(' and ')).join(', or ');
      return `${label} if ${when}`;
    })
    .join('; ');
}

export interface PlannedTarget {
  facts: TargetFacts;
  source: SourceLocation;
}

export function offlineTarget(
  t: PlannedTarget,
  spec: PolicyChoice,
  configs: ConfigLookup,
  ctx: OfflineContext,
  notes: string[],
  shared: SharedView = NO_SHARING,
): TargetReport {
  const uid = `manifest:${targetKey(t.facts)}`;
  const facts = { ...t.facts, uid, loadBalancerId: existingId(t.facts) ?? NEW_CLB } as TargetFacts;
  // The governing config as the operator sees it; one named but not among the manifests may exist in the cluster: its
  // L7 steps cannot be planned here.
  const view = configViewOf(facts, configs);
  const configsKnown = !(view && !view.exists && facts.annotations?.[IngressAnnotation.TkeServiceConfig]);
  if (!configsKnown) notes.push(`${targetKey(facts)}: TkeServiceConfig ${view?.name} is not among the manifests, so its plan is left out`);
  const dims = openDims(facts, view, ctx.pinned);
  const outcomes: Outcome[] = scenarios(dims).map((scenario) => ({
    scenario,
    analysis: analyzeTarget({
      facts,
      spec: spec.spec,
      ...(spec.owner ? { owner: spec.owner } : {}),
      profile: ctx.profile,
      clb: { state: 'Found', clb: syntheticClb(facts, scenario, uid) },
      ...(view ? { config: view } : {}),
      configsKnown,
      shared,
      now: ctx.now,
      graceMs: TKE_GRACE_MS,
    }),
  }));
  // The most severe outcome is shown; among equals the first, whose open facts are the CLB defaults.
  const primary = outcomes.reduce((a, b) => (SEVERITY[b.analysis.assessment.verdict] < SEVERITY[a.analysis.assessment.verdict] ? b : a));
  const open = (Object.keys(dims) as DimKey[]).filter((d) => (dims[d]?.length ?? 0) > 1);
  const condition = conditionOf(outcomes, open);
  // Said whenever it matters: the verdict or the steps would differ with another value of an open fact.
  const plans = new Set(outcomes.map((o) => JSON.stringify(o.analysis.plan.steps)));
  const assumed = open.length > 0 && (condition || plans.size > 1) ? Object.fromEntries(open.map((d) => [DIMS[d].label, primary.scenario[d]])) : undefined;
  return targetReport(primary.analysis, {
    ...(spec.policy ? { policy: spec.policy } : {}),
    ...(condition ? { condition } : {}),
    ...(assumed ? { assumed } : {}),
    source: t.source,
  });
}

export function planReport(set: ManifestSet, ctx: OfflineContext): Report {
  const targets: PlannedTarget[] = [
    ...set.services.map((s) => ({ facts: serviceFacts(s.object) as TargetFacts, source: s.source })),
    ...set.ingresses.map((i) => ({ facts: ingressFacts(i.object) as TargetFacts, source: i.source })),
  ];
  const choices = choosePolicies(targets.map((t) => t.facts), set.policies as LoopbackPolicy[]);
  const notes: string[] = [];
  if (targets.length === 0) notes.push(`no Service or Ingress among the manifests (${set.skipped} other object${set.skipped === 1 ? '' : 's'})`);
  // Ingresses of the manifests that name one TkeServiceConfig are seen together, as the operator sees them.
  const shared = sharedView(
    targets.map((t) => t.facts),
    [],
    // Targets no policy selects are planned as one default policy's (NO_POLICY), as analyzeTarget does.
    (f) => choices.get(targetKey(f))?.owner ?? NO_POLICY,
  );
  const configs = configLookupOf(set.tkeServiceConfigs);
  const reports = targets.map((t) => offlineTarget(t, choices.get(targetKey(t.facts)) ?? DEFAULT_CHOICE, configs, ctx, notes, shared));
  return buildReport('PlanReport', ctx.profile, reports, notes, ctx.now);
}
