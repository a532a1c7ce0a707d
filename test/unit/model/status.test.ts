import { describe, expect, it } from '@jest/globals';
import { findCondition, type Condition } from '../../../src/api/conditions.js';
import type { PolicyMode, Verdict } from '../../../src/api/loopbackpolicy.js';
import { assessment, type Assessment, type Blocker } from '../../../src/model/assessment-result.js';
import type { Change } from '../../../src/model/desired-state.js';
import { ROOT_CAUSES, type RootCauseId } from '../../../src/model/root-causes.js';
import { buildPolicyStatus, initialPolicyStatus, MAX_PLAN_LINES, targetProblem, targetStatusOf, type TargetOutcome } from '../../../src/model/status.js';
import { countsSummary, countVerdicts } from '../../../src/model/verdict-counts.js';
import { PROFILES } from './fixtures.js';

const now = new Date('2025-06-01T12:00:00.500Z');
const later = new Date('2025-06-01T12:10:00Z');
const SRC: Change = { action: 'SetListenerHealthCheckSource', listenerId: 'lbl-1', protocol: 'TCP', port: 80, from: 0, to: 1 };

function outcome(
  name: string,
  rootCause: RootCauseId,
  opts: { changes?: Change[]; blockers?: Blocker[]; error?: TargetOutcome['error']; kind?: 'Service' | 'Ingress' } = {},
): TargetOutcome {
  const a: Assessment = assessment(
    { kind: opts.kind ?? 'Service', namespace: 'shop', name },
    {
      rootCause,
      message: `${rootCause} message`,
      loadBalancerId: 'lb-1',
      ...(opts.changes ? { changes: opts.changes } : {}),
      ...(opts.blockers ? { blockers: opts.blockers } : {}),
    },
  );
  return { assessment: a, ...(opts.error ? { error: opts.error } : {}) };
}

function status(mode: PolicyMode, outcomes: TargetOutcome[], extra: Partial<Parameters<typeof buildPolicyStatus>[0]> = {}) {
  return buildPolicyStatus({ generation: 3, mode, outcomes, now, profile: PROFILES.ipvsNew, ...extra });
}

function cond(s: { conditions?: Condition[] }, type: string) {
  const c = findCondition(s.conditions, type);
  return c ? `${c.status}/${c.reason}` : 'absent';
}

const mitigated = outcome('a', 'LoopbackPrevented');
const na = outcome('b', 'MasqueradedToNodeIp');
const atRiskNoPlan = outcome('c', 'KubeProxyTooOld');
const atRiskPlan = outcome('d', 'PodSourceNotMasqueraded', { changes: [SRC, { action: 'AddPreventLoopbackAnnotation' }] });
const waitingForTke = outcome('e', 'ClbNotAssigned');
const observing = outcome('f', 'ClbNotObserved');
const blocked = outcome('g', 'KeepaliveCapabilityMissing', {
  kind: 'Ingress',
  blockers: [{ reason: 'KeepaliveCapabilityMissing', message: 'file the ticket for L7 SNAT + keepalive' }],
});
const denied = outcome('h', 'PodSourceNotMasqueraded', {
  changes: [SRC],
  error: { reason: 'PermissionDenied', message: 'CAM denies clb:ModifyListener; grant it to the operator role', permanent: true },
});
const throttled = outcome('i', 'PodSourceNotMasqueraded', {
  changes: [SRC],
  error: { reason: 'Throttled', message: 'CLB API throttled', permanent: false },
});

interface Row {
  name: string;
  mode: PolicyMode;
  outcomes: TargetOutcome[];
  ready: string;
  reconciling: string;
  stalled: string;
  readyMessage?: RegExp;
}

const rows: Row[] = [
  { name: 'Enforce, all converged, none at risk', mode: 'Enforce', outcomes: [mitigated, na], ready: 'True/Reconciled', reconciling: 'absent', stalled: 'absent' },
  { name: 'Enforce, no targets', mode: 'Enforce', outcomes: [], ready: 'True/Reconciled', reconciling: 'absent', stalled: 'absent', readyMessage: /0 targets/ },
  {
    name: 'Enforce, at risk with nothing left to do',
    mode: 'Enforce',
    outcomes: [mitigated, atRiskNoPlan],
    ready: 'True/ReconciledWithRisks',
    reconciling: 'absent',
    stalled: 'absent',
    readyMessage: /Service\/c: KubeProxyTooOld/,
  },
  { name: 'Enforce, changes to apply', mode: 'Enforce', outcomes: [mitigated, atRiskPlan], ready: 'False/Progressing', reconciling: 'True/ApplyingChanges', stalled: 'absent', readyMessage: /applying 2 steps to 1 target/ },
  {
    name: 'Enforce, Pending on TKE does not hold Ready back',
    mode: 'Enforce',
    outcomes: [mitigated, waitingForTke],
    ready: 'True/Reconciled',
    reconciling: 'absent',
    stalled: 'absent',
    readyMessage: /1 waiting for TKE/,
  },
  { name: 'Enforce, a CLB not read yet', mode: 'Enforce', outcomes: [mitigated, observing], ready: 'False/Progressing', reconciling: 'True/Observing', stalled: 'absent' },
  {
    name: 'Enforce, missing capability stalls',
    mode: 'Enforce',
    outcomes: [mitigated, blocked, atRiskPlan],
    ready: 'False/KeepaliveCapabilityMissing',
    reconciling: 'absent',
    stalled: 'True/KeepaliveCapabilityMissing',
    readyMessage: /Ingress\/g: file the ticket/,
  },
  {
    name: 'Enforce, permission denied stalls and names the action',
    mode: 'Enforce',
    outcomes: [denied, atRiskPlan],
    ready: 'False/PermissionDenied',
    reconciling: 'absent',
    stalled: 'True/PermissionDenied',
    readyMessage: /clb:ModifyListener/,
  },
  {
    name: 'Enforce, transient errors keep reconciling',
    mode: 'Enforce',
    outcomes: [throttled, mitigated],
    ready: 'False/Progressing',
    reconciling: 'True/RetryingAfterError',
    stalled: 'absent',
    readyMessage: /throttled/,
  },
  {
    name: 'Audit, diagnosis complete with a plan',
    mode: 'Audit',
    outcomes: [mitigated, atRiskPlan, atRiskNoPlan, waitingForTke],
    ready: 'True/AuditComplete',
    reconciling: 'absent',
    stalled: 'absent',
    readyMessage: /Enforce mode would carry out 2 steps on 1 target/,
  },
  {
    name: 'Audit, blockers are reported but do not stall',
    mode: 'Audit',
    outcomes: [blocked],
    ready: 'True/AuditComplete',
    reconciling: 'absent',
    stalled: 'absent',
    readyMessage: /ticket or a fix/,
  },
  { name: 'Audit, a CLB not read yet', mode: 'Audit', outcomes: [observing], ready: 'False/Progressing', reconciling: 'True/Observing', stalled: 'absent' },
  { name: 'Audit, nothing to change', mode: 'Audit', outcomes: [mitigated, na], ready: 'True/AuditComplete', reconciling: 'absent', stalled: 'absent', readyMessage: /nothing to change/ },
];

describe('buildPolicyStatus conditions', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const s = status(row.mode, row.outcomes);
    expect({ ready: cond(s, 'Ready'), reconciling: cond(s, 'Reconciling'), stalled: cond(s, 'Stalled') }).toEqual({
      ready: row.ready,
      reconciling: row.reconciling,
      stalled: row.stalled,
    });
    if (row.readyMessage) expect(findCondition(s.conditions, 'Ready')?.message).toMatch(row.readyMessage);
    for (const c of s.conditions ?? []) {
      expect(c.observedGeneration).toBe(3);
      expect(c.reason).toMatch(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/);
    }
    expect(s.observedGeneration).toBe(3);
  });

  it('a permanent error stalls in any mode (CAM denies the CLB read of an Audit policy), naming the target', () => {
    const unread = outcome('h', 'ClbNotObserved', { error: { reason: 'PermissionDenied', message: 'reading CLBs: CAM denies clb:DescribeLoadBalancers', permanent: true } });
    const s = status('Audit', [mitigated, unread]);
    expect(cond(s, 'Stalled')).toBe('True/PermissionDenied');
    expect(cond(s, 'Ready')).toBe('False/PermissionDenied');
    expect(findCondition(s.conditions, 'Stalled')?.message).toBe('Service/h: reading CLBs: CAM denies clb:DescribeLoadBalancers');
  });

  it("a condition's examples are printable and bounded as a target's message is: an error quoting a user's annotation", () => {
    // e.g. TkeServiceConfig "<the annotation's value>" named by the Ingress does not exist: a right-to-left override in it.
    const named = outcome('h', 'ClbNotObserved', { error: { reason: 'TargetMisconfigured', message: `TkeServiceConfig cfg\u202egnp.exe does not exist; ${'x'.repeat(2000)}`, permanent: true } });
    const message = findCondition(status('Enforce', [named]).conditions, 'Stalled')?.message ?? '';
    expect(message.startsWith('Service/h: TkeServiceConfig cfg\ufffdgnp.exe does not exist; xxx')).toBe(true);
    expect(message).not.toContain('\u202e');
    expect(message.length).toBe('Service/h: '.length + 1024);
  });

  it('removes Reconciling and Stalled once they are false, keeping Ready’s transition time', () => {
    const first = status('Enforce', [atRiskPlan]);
    expect(cond(first, 'Reconciling')).toBe('True/ApplyingChanges');
    const second = buildPolicyStatus({ generation: 3, mode: 'Enforce', outcomes: [mitigated], now: later, previousConditions: first.conditions });
    expect(cond(second, 'Reconciling')).toBe('absent');
    expect(findCondition(second.conditions, 'Ready')?.lastTransitionTime).toBe('2025-06-01T12:10:00Z');
    const third = buildPolicyStatus({ generation: 3, mode: 'Enforce', outcomes: [mitigated, na], now: new Date('2025-06-01T13:00:00Z'), previousConditions: second.conditions });
    // same status (True): the transition time stays although the message changed
    expect(findCondition(third.conditions, 'Ready')?.lastTransitionTime).toBe('2025-06-01T12:10:00Z');
    expect(findCondition(third.conditions, 'Ready')?.message).toMatch(/2 targets/);
  });

  it('starts a generation with Ready=Unknown and Reconciling=True', () => {
    const s = initialPolicyStatus(4, [{ type: 'Stalled', status: 'True', reason: 'PermissionDenied', message: 'x', lastTransitionTime: '2025-01-01T00:00:00Z' }], now);
    expect(cond(s, 'Ready')).toBe('Unknown/Initializing');
    expect(cond(s, 'Reconciling')).toBe('True/NewGeneration');
    expect(cond(s, 'Stalled')).toBe('absent');
    expect(s.observedGeneration).toBe(4);
  });
});

describe('targetProblem (the per-target error gauge)', () => {
  it('names the target’s own error first, then (Enforce only) what blocks it', () => {
    expect(targetProblem(denied, true)).toBe(denied.error?.reason);
    expect(targetProblem(denied, false)).toBe(denied.error?.reason);
    expect(targetProblem(blocked, true)).toBe('KeepaliveCapabilityMissing');
    // Audit reports blockers but does not try, so nothing failed.
    expect(targetProblem(blocked, false)).toBeUndefined();
    expect(targetProblem(atRiskPlan, true)).toBeUndefined();
    expect(targetProblem(mitigated, true)).toBeUndefined();
  });
});

describe('counts and target list', () => {
  const all: [RootCauseId, Verdict][] = (Object.keys(ROOT_CAUSES) as RootCauseId[]).map((id) => [id, ROOT_CAUSES[id].verdict]);

  it('counts every verdict', () => {
    const outcomes = all.map(([id], i) => outcome(`t${i}`, id));
    const c = countVerdicts(outcomes.map((o) => o.assessment));
    const expected = { atRisk: 0, mitigated: 0, notApplicable: 0, unsupported: 0, pending: 0, skipped: 0, conflict: 0, total: outcomes.length };
    const key = { AtRisk: 'atRisk', Mitigated: 'mitigated', NotApplicable: 'notApplicable', Unsupported: 'unsupported', Pending: 'pending', Skipped: 'skipped', Conflict: 'conflict' } as const;
    for (const [, v] of all) expected[key[v]]++;
    expect(c).toEqual(expected);
    expect(Object.values(key).every((k) => c[k] > 0)).toBe(true);
  });

  it('summarises counts', () => {
    expect(countsSummary({ atRisk: 2, mitigated: 1, notApplicable: 0, unsupported: 0, pending: 0, skipped: 3, conflict: 0, total: 6 })).toBe(
      '6 targets: 2 at risk, 1 mitigated, 3 skipped',
    );
    expect(countsSummary({ atRisk: 0, mitigated: 1, notApplicable: 0, unsupported: 0, pending: 0, skipped: 0, conflict: 0, total: 1 })).toBe('1 target: 1 mitigated');
  });

  it('sorts most severe first, then kind and name', () => {
    const s = status('Audit', [outcome('z', 'LoopbackPrevented'), outcome('b', 'PublicClb'), outcome('y', 'L7Loopback', { kind: 'Ingress' }), outcome('a', 'KubeProxyTooOld'), outcome('m', 'Ipv6Clb')]);
    expect(s.targets?.map((t) => `${t.verdict}:${t.kind}/${t.name}`)).toEqual([
      'AtRisk:Ingress/y',
      'AtRisk:Service/a',
      'Unsupported:Service/m',
      'Mitigated:Service/z',
      'NotApplicable:Service/b',
    ]);
    expect(s.targetsTruncated).toBe(false);
    expect(s).not.toHaveProperty('targetsNote');
  });

  it('truncates the list, keeping the most severe, and says so', () => {
    const outcomes = [
      ...Array.from({ length: 150 }, (_, i) => outcome(`na-${String(i).padStart(3, '0')}`, 'PublicClb')),
      ...Array.from({ length: 5 }, (_, i) => outcome(`risk-${i}`, 'KubeProxyTooOld')),
    ];
    const s = status('Enforce', outcomes);
    expect(s.targets).toHaveLength(100);
    expect(s.targets?.slice(0, 5).every((t) => t.verdict === 'AtRisk')).toBe(true);
    expect(s.targetsTruncated).toBe(true);
    expect(s.targetsNote).toMatch(/100 of 155/);
    expect(s.counts?.total).toBe(155);
    expect(s.counts?.notApplicable).toBe(150);
    const small = status('Enforce', outcomes, { maxTargets: 3 });
    expect(small.targets).toHaveLength(3);
  });

  it('stays under 512 KiB at 12,000 targets however much each holds; counts exact; Ready says where the rest is', () => {
    // The worst a target can carry: a 32-line plan of long lines, 6 long alternatives, a long message and error.
    const longAlternatives = Array.from({ length: 6 }, (_, i) => ({ id: 'ServiceDnsName' as const, advice: `advice ${i} ${'a'.repeat(600)}`, limits: 'l'.repeat(300), source: 's' }));
    const worst = (name: string, rootCause: RootCauseId): TargetOutcome => {
      const o = outcome(name, rootCause, { changes: Array.from({ length: 40 }, (_, i) => ({ ...SRC, listenerId: `lbl-${i}-${'x'.repeat(300)}` })), error: { reason: 'Throttled', message: 'e'.repeat(2000), permanent: false } });
      return { ...o, assessment: { ...o.assessment, alternatives: longAlternatives, rootCause: { ...o.assessment.rootCause, message: 'm'.repeat(2000) } }, plan: Array.from({ length: 40 }, (_, i) => `step ${i} ${'p'.repeat(300)}`) };
    };
    const outcomes = [
      ...Array.from({ length: 9_000 }, (_, i) => outcome(`cip-${i}`, 'NotLoadBalancerService')),
      ...Array.from({ length: 2_500 }, (_, i) => worst(`risk-${i}`, 'KubeProxyTooOld')),
      ...Array.from({ length: 500 }, (_, i) => outcome(`ok-${i}`, 'LoopbackPrevented')),
    ];
    const releases = Array.from({ length: 40 }, (_, i) => ({ kind: 'Service' as const, name: `gone-${i}`, plan: Array.from({ length: 40 }, (_, j) => `restore ${j} ${'r'.repeat(300)}`), error: { reason: 'Throttled' as const, message: 'e'.repeat(2000), permanent: false } }));
    const s = status('Enforce', outcomes, { releases });
    const bytes = JSON.stringify({ apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackPolicy', metadata: { name: 'p', namespace: 'shop' }, spec: {}, status: s }).length;
    expect(bytes).toBeLessThan(512 * 1024);
    expect(s.counts).toMatchObject({ total: 12_000, atRisk: 2_500 });
    expect((s.counts?.atRisk ?? 0) + (s.counts?.notApplicable ?? 0) + (s.counts?.mitigated ?? 0)).toBe(12_000);
    expect(s.targetsTruncated).toBe(true);
    expect(s.targets?.length).toBeGreaterThan(0);
    expect(s.targets?.every((t) => t.verdict === 'AtRisk')).toBe(true);
    expect(s.targetsNote?.length).toBeLessThanOrEqual(256);
    expect(findCondition(s.conditions, 'Ready')?.message).toMatch(new RegExp(`status.targets shows the ${s.targets?.length} most severe of 12000 .*loopguard doctor.*loopguard_target_risk`));
  });

  it('renders a target: plan lines, mitigations, error, bounded sizes', () => {
    const many: Change[] = Array.from({ length: 40 }, (_, i) => ({ ...SRC, listenerId: `lbl-${i}` }));
    const t = targetStatusOf({
      ...outcome('web', 'PodSourceNotMasqueraded', { changes: many }),
      error: { reason: 'Throttled', message: 'x'.repeat(2000), permanent: false },
    });
    expect(t.plan).toHaveLength(MAX_PLAN_LINES);
    expect(t.plan?.[0]).toBe('listener lbl-0 (TCP:80): health-check source VIP -> 100.64.0.0/10');
    expect(t.plan?.[MAX_PLAN_LINES - 1]).toBe('... and 9 more steps');
    expect(t.message?.length).toBeLessThanOrEqual(1024);
    expect(t.message).toMatch(/Last error \(Throttled\)/);
    expect(t.loadBalancerId).toBe('lb-1');
    expect(t).not.toHaveProperty('mitigations');
  });

  it('clips a CLB id a user wrote into the annotation to the CRD bound (one bad value never fails the status write)', () => {
    const o = outcome('web', 'PodSourceNotMasqueraded');
    const long = { ...o, assessment: { ...o.assessment, loadBalancerId: `lb-${'x'.repeat(300)}` } };
    expect(targetStatusOf(long).loadBalancerId?.length).toBe(64);
  });

  it('projects the cluster profile and stamps the evaluation time', () => {
    const s = status('Enforce', [mitigated]);
    expect(s.clusterProfile).toEqual({
      kubeProxyMode: 'ipvs',
      kubeProxyVersion: 'v1.20.6-tke.12',
      preventLoopbackSupported: 'True',
      vipBinding: 'OnAnnotation',
      source: 'DaemonSet',
      message: expect.any(String),
    });
    expect(s.lastEvaluatedTime).toBe('2025-06-01T12:00:00Z');
  });
});
