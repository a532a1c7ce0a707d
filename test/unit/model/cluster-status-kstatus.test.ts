// kstatus semantics of ClusterLoopbackPolicy.status (docs/cluster-policy.md §7), as status.test.ts holds them for the
// namespaced kind: Ready always, Reconciling and Stalled only while True, observedGeneration on the status and on every
// condition. Each status buildClusterPolicyStatus builds is also read by the Argo CD health check config/argocd ships for
// the kind (a real Lua VM), so what kstatus, `kubectl wait` and Argo CD conclude is checked on the same object.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { LuaFactory, type LuaEngine } from 'wasmoon';
import { findCondition, type Condition } from '../../../src/api/conditions.js';
import { API_VERSION, type PolicyMode } from '../../../src/api/loopbackpolicy.js';
import { CLUSTER_KIND } from '../../../src/api/clusterloopbackpolicy.js';
import { assessment, type Blocker } from '../../../src/model/assessment-result.js';
import { buildClusterPolicyStatus, type ClusterStatusInput } from '../../../src/model/cluster-status.js';
import type { Change } from '../../../src/model/desired-state.js';
import type { RootCauseId } from '../../../src/model/root-causes.js';
import type { TargetOutcome } from '../../../src/model/status.js';
import { PROFILES } from './fixtures.js';

const now = new Date('2025-06-01T12:00:00.500Z');
const GENERATION = 3;
const SRC: Change = { action: 'SetListenerHealthCheckSource', listenerId: 'lbl-1', protocol: 'TCP', port: 80, from: 0, to: 1 };

function outcome(namespace: string, name: string, rootCause: RootCauseId, opts: { changes?: Change[]; blockers?: Blocker[]; error?: TargetOutcome['error'] } = {}): TargetOutcome {
  return {
    assessment: assessment(
      { kind: 'Service', namespace, name },
      { rootCause, message: `${rootCause} message`, loadBalancerId: 'lb-1', ...(opts.changes ? { changes: opts.changes } : {}), ...(opts.blockers ? { blockers: opts.blockers } : {}) },
    ),
    ...(opts.error ? { error: opts.error } : {}),
  };
}

const mitigated = (ns: string) => outcome(ns, 'a', 'LoopbackPrevented');
const notApplicable = (ns: string) => outcome(ns, 'b', 'MasqueradedToNodeIp');
const atRiskPlan = (ns: string) => outcome(ns, 'd', 'PodSourceNotMasqueraded', { changes: [SRC, { action: 'AddPreventLoopbackAnnotation' }] });
const observing = (ns: string) => outcome(ns, 'f', 'ClbNotObserved');
const denied = (ns: string) =>
  outcome(ns, 'h', 'PodSourceNotMasqueraded', { changes: [SRC], error: { reason: 'PermissionDenied', message: 'CAM denies clb:ModifyListener; grant it to the operator role', permanent: true } });
const throttled = (ns: string) => outcome(ns, 'i', 'PodSourceNotMasqueraded', { changes: [SRC], error: { reason: 'Throttled', message: 'CLB API throttled', permanent: false } });

function build(namespaces: Record<string, PolicyMode>, outcomes: TargetOutcome[], extra: Partial<ClusterStatusInput> = {}) {
  return buildClusterPolicyStatus({ generation: GENERATION, namespaces: new Map(Object.entries(namespaces)), excluded: ['kube-system'], outcomes, now, profile: PROFILES.ipvsNew, ...extra });
}

function cond(s: { conditions?: Condition[] }, type: string) {
  const c = findCondition(s.conditions, type);
  return c ? `${c.status}/${c.reason}` : 'absent';
}

interface Row {
  name: string;
  namespaces: Record<string, PolicyMode>;
  outcomes: TargetOutcome[];
  ready: string;
  reconciling: string;
  stalled: string;
  argocd: 'Healthy' | 'Progressing' | 'Degraded';
}

const rows: Row[] = [
  { name: 'no namespace covered', namespaces: {}, outcomes: [], ready: 'True/AuditComplete', reconciling: 'absent', stalled: 'absent', argocd: 'Healthy' },
  {
    name: 'Audit everywhere, at risk with a plan',
    namespaces: { shop: 'Audit', web: 'Audit' },
    outcomes: [atRiskPlan('shop'), mitigated('web')],
    ready: 'True/AuditComplete',
    reconciling: 'absent',
    stalled: 'absent',
    argocd: 'Healthy',
  },
  { name: 'Enforce, converged', namespaces: { shop: 'Enforce', web: 'Enforce' }, outcomes: [mitigated('shop'), notApplicable('web')], ready: 'True/Reconciled', reconciling: 'absent', stalled: 'absent', argocd: 'Healthy' },
  {
    name: 'Enforce, changes to apply',
    namespaces: { shop: 'Enforce', web: 'Enforce' },
    outcomes: [atRiskPlan('shop'), mitigated('web')],
    ready: 'False/Progressing',
    reconciling: 'True/ApplyingChanges',
    stalled: 'absent',
    argocd: 'Progressing',
  },
  {
    name: 'staged rollout: a plan in an Audit namespace is a report, not work in progress',
    namespaces: { shop: 'Enforce', web: 'Audit' },
    outcomes: [mitigated('shop'), atRiskPlan('web')],
    ready: 'True/ReconciledWithRisks',
    reconciling: 'absent',
    stalled: 'absent',
    argocd: 'Healthy',
  },
  {
    name: 'staged rollout: a blocker in an Audit namespace does not stall the policy',
    namespaces: { shop: 'Enforce', web: 'Audit' },
    outcomes: [mitigated('shop'), outcome('web', 'g', 'KeepaliveCapabilityMissing', { blockers: [{ reason: 'KeepaliveCapabilityMissing', message: 'keepalive needs a ticket' }] })],
    ready: 'True/ReconciledWithRisks',
    reconciling: 'absent',
    stalled: 'absent',
    argocd: 'Healthy',
  },
  {
    name: 'staged rollout: a blocker in the Enforce namespace stalls it',
    namespaces: { shop: 'Enforce', web: 'Audit' },
    outcomes: [outcome('shop', 'g', 'KeepaliveCapabilityMissing', { blockers: [{ reason: 'KeepaliveCapabilityMissing', message: 'keepalive needs a ticket' }] }), mitigated('web')],
    ready: 'False/KeepaliveCapabilityMissing',
    reconciling: 'absent',
    stalled: 'True/KeepaliveCapabilityMissing',
    argocd: 'Degraded',
  },
  { name: 'a CLB not read yet', namespaces: { shop: 'Audit' }, outcomes: [observing('shop')], ready: 'False/Progressing', reconciling: 'True/Observing', stalled: 'absent', argocd: 'Progressing' },
  {
    name: 'transient errors keep reconciling',
    namespaces: { shop: 'Enforce' },
    outcomes: [throttled('shop'), mitigated('shop')],
    ready: 'False/Progressing',
    reconciling: 'True/RetryingAfterError',
    stalled: 'absent',
    argocd: 'Progressing',
  },
  {
    name: 'permission denied in an Enforce namespace stalls',
    namespaces: { shop: 'Enforce', web: 'Audit' },
    outcomes: [denied('shop'), mitigated('web')],
    ready: 'False/PermissionDenied',
    reconciling: 'absent',
    stalled: 'True/PermissionDenied',
    argocd: 'Degraded',
  },
];

describe('ClusterLoopbackPolicy status: kstatus conditions', () => {
  let lua: LuaEngine;
  const script = readFileSync(new URL('../../../config/argocd/health.lua', import.meta.url), 'utf8');
  beforeAll(async () => {
    lua = await new LuaFactory().createEngine();
  });
  afterAll(() => lua.global.close());
  async function argocd(status: unknown): Promise<string> {
    lua.global.set('obj', { apiVersion: API_VERSION, kind: CLUSTER_KIND, metadata: { name: 'platform', generation: GENERATION }, status });
    return ((await lua.doString(script)) as { status: string }).status;
  }

  it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const s = build(row.namespaces, row.outcomes);
    expect({ ready: cond(s, 'Ready'), reconciling: cond(s, 'Reconciling'), stalled: cond(s, 'Stalled') }).toEqual({ ready: row.ready, reconciling: row.reconciling, stalled: row.stalled });
    expect(s.observedGeneration).toBe(GENERATION);
    for (const c of s.conditions ?? []) expect({ type: c.type, observedGeneration: c.observedGeneration }).toEqual({ type: c.type, observedGeneration: GENERATION });
    // Only Ready is ever False or Unknown: the abnormal-true conditions are there only while True.
    for (const c of s.conditions ?? []) if (c.type !== 'Ready') expect({ type: c.type, status: c.status }).toEqual({ type: c.type, status: 'True' });
    expect(await argocd(s)).toBe(row.argocd);
  });

  it('removes Reconciling and Stalled once they are false, keeping Ready’s transition time while Ready stays True', () => {
    const first = build({ shop: 'Enforce' }, [atRiskPlan('shop')]);
    expect(cond(first, 'Reconciling')).toBe('True/ApplyingChanges');
    const stalled = build({ shop: 'Enforce' }, [denied('shop')], { previousConditions: first.conditions, now: new Date('2025-06-01T12:05:00Z') });
    expect([cond(stalled, 'Reconciling'), cond(stalled, 'Stalled')]).toEqual(['absent', 'True/PermissionDenied']);
    const second = build({ shop: 'Enforce' }, [mitigated('shop')], { previousConditions: stalled.conditions, now: new Date('2025-06-01T12:10:00Z') });
    expect([cond(second, 'Ready'), cond(second, 'Reconciling'), cond(second, 'Stalled')]).toEqual(['True/Reconciled', 'absent', 'absent']);
    expect(findCondition(second.conditions, 'Ready')?.lastTransitionTime).toBe('2025-06-01T12:10:00Z');
    const third = build({ shop: 'Enforce', web: 'Enforce' }, [mitigated('shop'), notApplicable('web')], { previousConditions: second.conditions, now: new Date('2025-06-01T13:00:00Z') });
    expect(findCondition(third.conditions, 'Ready')?.lastTransitionTime).toBe('2025-06-01T12:10:00Z');
  });
});
