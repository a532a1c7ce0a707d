// The policy controller's reconcile, end to end without an apiserver: informer caches, the CLB observer and the
// executor over the in-memory world (loopguard's own ClbReader and Effects interfaces), status and Events kept in
// memory, and changes routed as the operator routes them (routing.ts: a policy or Service edit, a CLB read that
// differs). Twins of the integration suites' policy-level scenarios: Enforce converges, Audit writes nothing,
// conflict, deselect releases, deletion restores or is blocked, a failed CLB read retries; drift checks in their two
// tiers (drift-checks.ts), the health signal and the full re-read, over the world's DescribeTargetHealth; and the work
// each change costs, counted exactly (the targets planned, the listeners written).
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { API_VERSION, FINALIZER, KIND, type LoopbackPolicy, type LoopbackPolicySpec, type LoopbackPolicyStatus } from '../../../src/api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../../src/api/loopbackrecord.js';
import { CLUSTER_KIND, type ClusterLoopbackPolicy, type ClusterLoopbackPolicyStatus } from '../../../src/api/clusterloopbackpolicy.js';
import { ClbObserver } from '../../../src/cloud/clb-observer.js';
import { ClbError } from '../../../src/cloud/errors.js';
import { HealthSignal } from '../../../src/cloud/health-signal.js';
import { DriftScheduler, signalIntervalMs } from '../../../src/controllers/drift-signal.js';
import { DriftChecks } from '../../../src/controllers/drift-checks.js';
import { PolicyEventRouter } from '../../../src/controllers/policy/routing.js';
import { PolicyController } from '../../../src/controllers/policy/policy-controller.js';
import type { PolicyControllerOptions } from '../../../src/controllers/policy/deps.js';
import { LearnedCapabilities } from '../../../src/mitigation/capabilities.js';
import { Executor } from '../../../src/mitigation/executor.js';
import { PROFILES } from '../model/fixtures.js';
import { MemoryWorld } from './memory-world.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
/** The harness's TKE grace period: a release waits it for kube-proxy to release the VIP before sources go back. */
const GRACE_MS = 10_000;
const DRIFT_MS = 600_000;
/** Full re-reads per second: the operator's defaults, --cloud-rate-limit 10 × --drift-full-read-share 20 %. */
const FULL_READS_PER_S = 2;

/** Only the clock is faked (timers and promises run as usual): `later` moves it past a wait. */
function later(ms: number): void {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'], now: Date.now() + ms });
}

afterEach(() => {
  jest.useRealTimers();
});

const logger = { info: () => undefined, warn: () => undefined } as never;

function policyOf(name: string, spec: LoopbackPolicySpec, created = '2026-11-01T00:00:00Z'): LoopbackPolicy {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { namespace: 'shop', name, uid: `uid-${name}`, generation: 1, creationTimestamp: new Date(created) }, spec };
}

/** `names`: Services on CLBs lb-1, lb-2, … in turn; `perClb` Services share each CLB. */
function harness(...names: string[]) {
  return harnessOf(names, 1);
}

function harnessOf(names: readonly string[], perClb: number, probe?: PolicyControllerOptions['probe']) {
  const stopping = new AbortController();
  const world = new MemoryWorld();
  names.forEach((n, i) => world.addService(n, `lb-${Math.floor(i / perClb) + 1}`));
  // As the operator wires them: the signal records the health of every full read as its next baseline. No batching
  // window: each round's check goes out at once.
  const healthSignal = new HealthSignal(world.reader, 0);
  // The clock read at each call: the tests move it (`later`), and Date.now captured once would be the real one.
  const observer = new ClbObserver(healthSignal.recording(world.reader), () => Date.now());
  world.observer = observer;
  const checked = { health: 0, full: 0, escalated: 0 };
  let planned = 0;
  /** Status fields another field manager keeps on the policy (server-side apply leaves them). */
  const foreign: Record<string, unknown> = {};
  /** As the informers deliver them: a policy set here is routed (routing.ts), as its informer event would be. */
  const policies = new (class extends Map<string, LoopbackPolicy> {
    override set(k: string, v: LoopbackPolicy): this {
      super.set(k, v);
      router?.policy(v);
      return this;
    }
  })();
  /** ClusterLoopbackPolicies, by name: they cover namespace shop, the only one. */
  const clusters = new (class extends Map<string, ClusterLoopbackPolicy> {
    override set(k: string, v: ClusterLoopbackPolicy): this {
      super.set(k, v);
      router?.clusterPolicy(v);
      return this;
    }
  })();
  const events: { target: string; reason: string; type: string }[] = [];
  const removed: string[] = [];
  const capabilities = new LearnedCapabilities();
  const scheduler = new DriftScheduler(DRIFT_MS, FULL_READS_PER_S);
  const eventSink = { record: async (t: { name: string }, type: string, reason: string) => void events.push({ target: t.name, reason, type }) };
  const executor = new Executor({ effects: world, capabilities, events: eventSink, logger, metrics: { driftCorrections: { inc: () => undefined } } as never });
  const records = (): LoopbackRecord[] => world.loopbackRecords();
  /** What each round told the namespaces' reports (namespace-reports.ts): the namespaces it changed, and whether its coverage may have. */
  const reportCalls: [string[], boolean][] = [];
  const controller = new PolicyController({
    reports: { names: new Map(), changed: (namespaces, coverage) => void reportCalls.push([[...namespaces].sort(), coverage]) },
    caches: {
      records,
      policy: (_ns, name) => policies.get(name),
      policies: () => [...policies.values()],
      services: () => world.v1Services(),
      ingresses: () => [],
      gateways: () => [],
      envoyProxy: () => undefined,
      gatewayClass: () => undefined,
      clusterPolicy: (name: string) => clusters.get(name),
      clusterPolicies: () => [...clusters.values()],
      namespace: (name: string) => ({ name }),
      namespaces: () => [{ name: 'shop' }],
      ownNamespace: 'loopguard-system',
      record: (t) => records().find((r) => r.spec.target.name === t.name && r.spec.target.kind === t.kind),
    },
    tkeServiceConfig: () => undefined,
    tkeServiceConfigsSynced: () => true,
    observer,
    capabilities,
    statusWriter: {
      // As server-side apply: what another field manager added to the status (`foreign`) stays.
      apply: async (ns: string | undefined, name: string, status: LoopbackPolicyStatus | ClusterLoopbackPolicyStatus) => {
        const p = ns === undefined ? clusters.get(name) : policies.get(name);
        if (p) p.status = { ...status, ...foreign } as never;
      },
    },
    writer: {
      setFinalizers: async (p: LoopbackPolicy, finalizers: string[]) => {
        p.metadata.finalizers = finalizers;
      },
    },
    records: {
      list: async () => records(),
      remove: async (r: LoopbackRecord) => {
        removed.push(r.spec.target.name);
        world.records.delete(r.spec.target.name);
      },
    },
    events: { ...eventSink, recordStanding: eventSink.record },
    metrics: { reportTargets: () => undefined, forgetTargets: () => undefined, targetsPlanned: { inc: (n?: unknown) => void (planned += typeof n === 'number' ? n : 1) } },
    logger,
    profile: () => PROFILES.ipvsNew,
    driftScheduler: scheduler,
    tkeGraceMs: GRACE_MS,
    executor,
    ...(probe ? { probe } : {}),
    stopping: stopping.signal,
  });
  // Routed as the operator routes: informer events and CLB reads that differ note what changed and queue the policy.
  const queued = new Set<string>();
  const router: PolicyEventRouter = new PolicyEventRouter(
    { add: (k) => void queued.add(k), addAfter: (k) => void queued.add(k) },
    {
      policies: () => [...policies.values()],
      clusterPolicies: () => [...clusters.values()],
      namespace: (name: string) => ({ name }),
      ownNamespace: 'loopguard-system',
      policy: (_ns, name) => policies.get(name),
      clusterPolicy: (name) => clusters.get(name),
    },
    controller,
    () => undefined,
  );
  observer.onChange = (id) => router.clb(id);
  /** A Service's informer event: loopguard's own annotation writes, and the tests' edits (`edit`). */
  const annotate = world.annotations.set.bind(world.annotations);
  world.annotations.set = (name: string, a: Record<string, string>) => {
    annotate(name, a);
    router.target('shop', `Service/shop/${name}`, a['service.kubernetes.io/loadbalance-id']);
    return world.annotations;
  };
  const edit = (name: string, extra: Record<string, string>) => world.annotations.set(name, { ...world.annotations.get(name), ...extra });
  const drift = new DriftChecks({
    observer,
    scheduler,
    health: healthSignal,
    checked: (tier, clbs) => void (checked[tier] += clbs),
    clbs: () => controller.clbsInUse(),
    overdue: (ids) => ids.forEach((id) => router.clb(id)),
    logger,
  });
  /** One pass of the drift checks (the CLB side), then the policies it queued, as the work queue would run them. */
  const driftPass = async () => {
    await drift.run(new AbortController().signal);
  };
  const reconcile = (name: string) => {
    queued.delete(`shop/${name}`);
    return controller.reconcile(`shop/${name}`, new AbortController().signal);
  };
  const reconcileCluster = (name: string) => {
    queued.delete(`${CLUSTER_KIND}/${name}`);
    return controller.reconcile(`${CLUSTER_KIND}/${name}`, new AbortController().signal);
  };
  const target = (policy: string, name: string) => policies.get(policy)?.status?.targets?.find((t) => t.name === name);
  return { world, policies, events, removed, reconcile, target, stopping, observer, checked, planned: () => planned, queued, edit, driftPass, foreign, clusters, reportCalls, reconcileCluster };
}

describe('PolicyController.reconcile over an in-memory world', () => {
  it('Enforce: a finalizer, the target mitigated in one round, Ready, and back once per drift interval (drift itself is the CLB side\'s)', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    const outcome = await h.reconcile('p');
    expect(h.policies.get('p')?.metadata.finalizers).toEqual([FINALIZER]);
    expect([h.world.source('lb-1', 'lb-1-tcp'), h.world.source('lb-1', 'lb-1-udp')]).toEqual([1, 1]);
    expect(h.world.annotations.get('web')?.[PREVENT]).toBe('true');
    expect(h.target('p', 'web')).toMatchObject({ verdict: 'Mitigated' });
    expect(h.policies.get('p')?.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
    // For what only time changes (a standing Event's refresh), jittered ±10 %.
    const after = (outcome as { requeueAfterMs: number }).requeueAfterMs;
    expect(after).toBeGreaterThanOrEqual(0.9 * DRIFT_MS);
    expect(after).toBeLessThanOrEqual(1.1 * DRIFT_MS);
    expect(h.events.map((e) => e.reason)).toContain('TargetMitigated');
    // The next round writes nothing.
    const writes = h.world.log.length;
    await h.reconcile('p');
    expect(h.world.log).toHaveLength(writes);
  });

  it('a field another field manager keeps in the status is left alone: no status write per round', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    await h.reconcile('p');
    h.foreign['note'] = 'kept by another field manager';
    const policy = h.policies.get('p') as LoopbackPolicy;
    policy.status = { ...policy.status, ...h.foreign };
    const status = policy.status;
    later(DRIFT_MS);
    await h.reconcile('p');
    expect(h.policies.get('p')?.status).toBe(status);
  });

  it('Audit: the plan is reported, nothing is written', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Audit' }));
    await h.reconcile('p');
    expect(h.world.log).toEqual([]);
    expect(h.target('p', 'web')).toMatchObject({ verdict: 'AtRisk' });
    expect(h.target('p', 'web')?.plan?.length).toBeGreaterThan(0);
    expect(h.events).toContainEqual({ target: 'web', reason: 'TargetAtRisk', type: 'Warning' });
  });

  it('Events on a change of verdict only: AtRisk once under Audit, Mitigated once after the switch to Enforce', async () => {
    const h = harness('web');
    const verdicts = () => h.events.filter((e) => e.reason === 'TargetAtRisk' || e.reason === 'TargetMitigated').map((e) => e.reason);
    h.policies.set('p', policyOf('p', { mode: 'Audit' }));
    await h.reconcile('p');
    later(DRIFT_MS);
    await h.reconcile('p');
    expect(verdicts()).toEqual(['TargetAtRisk']);
    h.policies.set('p', { ...policyOf('p', { mode: 'Enforce' }), metadata: { ...policyOf('p', {}).metadata, generation: 2 } });
    await h.reconcile('p');
    later(2 * DRIFT_MS);
    await h.reconcile('p');
    expect(verdicts()).toEqual(['TargetAtRisk', 'TargetMitigated']);
  });

  it('two policies select one target: the older manages it, the other reports PolicyConflict', async () => {
    const h = harness('web');
    h.policies.set('old', policyOf('old', { mode: 'Enforce' }, '2026-01-01T00:00:00Z'));
    h.policies.set('new', policyOf('new', { mode: 'Enforce' }, '2026-06-01T00:00:00Z'));
    await h.reconcile('new');
    expect(h.target('new', 'web')).toMatchObject({ verdict: 'Conflict', rootCause: 'PolicyConflict' });
    expect(h.world.log).toEqual([]);
    await h.reconcile('old');
    expect(h.target('old', 'web')).toMatchObject({ verdict: 'Mitigated' });
  });

  it('a target the policy stops selecting is released: originals back, record gone', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    h.policies.set('p', { ...policyOf('p', { mode: 'Enforce', selector: { matchLabels: { tier: 'none' } } }), metadata: { ...policyOf('p', {}).metadata, finalizers: [FINALIZER], generation: 2 } });
    await h.reconcile('p');
    // prevent-loopback off first; the sources stay on 100.64 while kube-proxy may still bind the VIP.
    expect(h.world.annotations.get('web')?.[PREVENT]).toBeUndefined();
    expect([h.world.source('lb-1', 'lb-1-tcp'), h.world.source('lb-1', 'lb-1-udp')]).toEqual([1, 1]);
    await h.reconcile('p');
    expect([h.world.source('lb-1', 'lb-1-tcp'), h.world.source('lb-1', 'lb-1-udp')]).toEqual([1, 1]);
    later(GRACE_MS);
    await h.reconcile('p');
    expect([h.world.source('lb-1', 'lb-1-tcp'), h.world.source('lb-1', 'lb-1-udp')]).toEqual([0, 0]);
    expect(h.world.annotations.get('web')?.[PREVENT]).toBeUndefined();
    expect(h.world.records.size).toBe(0);
  });

  it('a target deleted while its round runs is not in that round\'s status: outcomes are published over the targets as they are at its end', async () => {
    const h = harnessOf(['web', 'api'], 1);
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    // The Service api goes from the cache while the round writes web's CLB (a fault that never matches: a hook).
    h.world.fail((t) => {
      if (t.name === 'web') h.world.facts.delete('api');
      return false;
    }, { status: 'done' });
    await h.reconcile('p');
    expect(h.target('p', 'web')).toMatchObject({ verdict: 'Mitigated' });
    expect(h.target('p', 'api')).toBeUndefined();
    expect(h.policies.get('p')?.status?.counts).toMatchObject({ total: 1, mitigated: 1 });
  });

  it('deletion: every original restored through the same planner and executor, then the finalizer goes', async () => {
    const h = harness('web', 'api');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    const p = h.policies.get('p') as LoopbackPolicy;
    p.metadata.deletionTimestamp = new Date();
    // The annotations go first; the deletion says it waits for kube-proxy, keeps its finalizer, and comes back when
    // the wait ends (not on the error backoff).
    const outcome = await h.reconcile('p');
    expect(outcome).toEqual({ requeueAfterMs: expect.any(Number) });
    expect((outcome as { requeueAfterMs: number }).requeueAfterMs).toBeGreaterThan(GRACE_MS - 1_000);
    expect((outcome as { requeueAfterMs: number }).requeueAfterMs).toBeLessThanOrEqual(GRACE_MS + 250);
    expect([...h.world.listeners.values()].flat().map((l) => l.source)).toEqual([1, 1, 1, 1]);
    expect(p.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Terminating', message: expect.stringMatching(/Service web: waiting for TKE \(VipReleased\)/) });
    expect(p.metadata.finalizers).toEqual([FINALIZER]);
    later(GRACE_MS);
    await h.reconcile('p');
    expect([...h.world.listeners.values()].flat().map((l) => l.source)).toEqual([0, 0, 0, 0]);
    expect(h.world.records.size).toBe(0);
    expect(p.metadata.finalizers).toEqual([]);
  });

  it('deletion blocked by a corrupt record: Stalled / DeletionBlocked with the way out, the finalizer kept', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    const entry = h.world.records.get('web');
    if (entry) entry.record = { v: 1, listeners: { 'lb-1-tcp': { sourceIpType: 7 as 0 } } };
    const p = h.policies.get('p') as LoopbackPolicy;
    p.metadata.deletionTimestamp = new Date();
    const outcome = await h.reconcile('p');
    expect((outcome as { retry?: Error }).retry?.message).toMatch(/deletion waits for the revert of 1 target\(s\), e\.g\. Service shop\/web: its LoopbackRecord/);
    expect(p.status?.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason: 'DeletionBlocked' });
    expect(p.metadata.finalizers).toEqual([FINALIZER]);
    expect(h.events).toContainEqual({ target: 'p', reason: 'DeletionBlocked', type: 'Warning' });
  });

  it('a CLB read that fails transiently: every target reports it and the queue retries with backoff', async () => {
    const h = harness('web');
    h.world.readFaults.push(new ClbError({ code: 'RequestLimitExceeded', retryable: true, reason: 'Throttled', message: 'throttled', throttled: true, apiMessage: 'throttled' }));
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    const outcome = await h.reconcile('p');
    expect(outcome && 'retry' in outcome).toBe(true);
    expect(h.world.log).toEqual([]);
    await h.reconcile('p');
    expect(h.target('p', 'web')).toMatchObject({ verdict: 'Mitigated' });
  });

  it('a CLB read refused for good (CAM): the policy is Stalled naming it, and no retry storm', async () => {
    const h = harness('web');
    h.world.readFaults.push(new ClbError({ code: 'UnauthorizedOperation', retryable: false, reason: 'PermissionDenied', message: 'grant clb:DescribeLoadBalancers', throttled: false, apiMessage: 'denied' }));
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    const outcome = await h.reconcile('p');
    expect(outcome && 'retry' in outcome).toBe(false);
    expect(h.policies.get('p')?.status?.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason: 'PermissionDenied' });
    expect(h.world.log).toEqual([]);
  });

  it('Audit after Enforce: the changes made are held; a source drifted back is corrected, nothing else is done', async () => {
    const h = harness('web', 'api');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    await h.driftPass();
    h.policies.set('p', { ...policyOf('p', { mode: 'Audit' }), metadata: { ...policyOf('p', {}).metadata, generation: 2, finalizers: [FINALIZER] } });
    h.world.setSource('lb-1', 'lb-1-udp', 0);
    h.world.annotations.set('api', { 'service.kubernetes.io/loadbalance-id': 'lb-2' });
    // Half an interval on, the health signal is due: web's UDP backends are Dead (the source is back on the VIP
    // kube-proxy binds), so lb-1 is re-read in full in the same round; lb-2's health is unchanged.
    later(signalIntervalMs(DRIFT_MS));
    const before = h.world.log.length;
    await h.driftPass();
    await h.reconcile('p');
    expect(h.checked).toMatchObject({ health: 2, full: 0, escalated: 1 });
    // Only the drift correction of a held target: api's lost annotation waits for Enforce.
    expect(h.world.log.slice(before).map((x) => `${x.target} ${x.step.kind}`)).toEqual(['web SetListenerHealthCheckSource']);
    expect(h.world.source('lb-1', 'lb-1-udp')).toBe(1);
    expect(h.target('p', 'api')?.plan?.length).toBeGreaterThan(0);
    expect(h.world.annotations.get('api')?.[PREVENT]).toBeUndefined();
  });

  it('deleted with loopguard.dev/abandon: records forgotten, nothing restored, Events say so, the finalizer goes', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    const p = h.policies.get('p') as LoopbackPolicy;
    p.metadata.deletionTimestamp = new Date();
    p.metadata.annotations = { 'loopguard.dev/abandon': 'true' };
    await h.reconcile('p');
    expect(h.removed).toEqual(['web']);
    expect([h.world.source('lb-1', 'lb-1-tcp'), h.world.annotations.get('web')?.[PREVENT]]).toEqual([1, 'true']);
    expect(h.events.filter((e) => e.reason === 'RevertAbandoned').map((e) => e.target)).toEqual(['web', 'p']);
    expect(p.metadata.finalizers).toEqual([]);
    // A reconcile before the finalizer's removal reached the cache (the records' deletions queue the policy): nothing
    // is left to abandon, and nothing more is said (it said "targets left: none" on the policy, under load in CI).
    p.metadata.finalizers = [FINALIZER];
    await h.reconcile('p');
    expect(h.events.filter((e) => e.reason === 'RevertAbandoned').map((e) => e.target)).toEqual(['web', 'p']);
    expect(p.metadata.finalizers).toEqual([]);
  });

  it('shutdown before the round: no target is reached, the last status stays, an Event says where it stopped', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    h.stopping.abort();
    await h.reconcile('p');
    expect(h.world.log).toEqual([]);
    expect(h.policies.get('p')?.status?.targets).toBeUndefined();
    expect(h.events).toContainEqual({ target: 'p', reason: 'RoundInterrupted', type: 'Normal' });
  });
});

describe('Drift checks on the CLB side, in two tiers (drift-checks.ts)', () => {
  /** The CLBs read in full (DescribeLoadBalancers) from now on. */
  function fullReads(h: ReturnType<typeof harness>): string[] {
    const reads: string[] = [];
    const describe = h.world.reader.describeLoadBalancers.bind(h.world.reader);
    h.world.reader.describeLoadBalancers = async (ids, opts) => {
      reads.push(...ids);
      return describe(ids, opts);
    };
    return reads;
  }

  it('half an interval on, one DescribeTargetHealth for the CLBs and no full read; an interval on, every CLB re-read in full; no policy queued', async () => {
    const h = harness('web', 'api');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    h.queued.clear();
    const full = fullReads(h);
    h.world.healthReads.length = 0;
    await h.driftPass();
    later(signalIntervalMs(DRIFT_MS));
    await h.driftPass();
    expect(full).toEqual([]);
    expect(h.world.healthReads.map((ids) => [...ids].sort())).toEqual([['lb-1', 'lb-2']]);
    expect(h.checked).toMatchObject({ health: 2, full: 0, escalated: 0 });
    // The full cycle: the drift interval, as 2 CLBs cost far less than the full-read share.
    h.world.healthReads.length = 0;
    later(DRIFT_MS);
    await h.driftPass();
    expect([...full].sort()).toEqual(['lb-1', 'lb-2']);
    // Their health comes with the full read (one call for both), not from a signal of its own.
    expect(h.world.healthReads).toHaveLength(1);
    expect(h.checked).toMatchObject({ health: 2, full: 2, escalated: 0 });
    // Read as they were left (the executor's writes are in the cache): nothing changed, nothing queued.
    expect(h.queued).toEqual(new Set());
    expect(h.world.log.filter((x) => x.step.kind === 'SetListenerHealthCheckSource')).toHaveLength(4);
  });

  it('a drift the health signal sees: its CLB read in full, its policy queued for that CLB, which plans its targets only and corrects it', async () => {
    const h = harness('web', 'api');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    // Its own annotation writes came back as Service events: one more round, which finds nothing to do.
    await h.reconcile('p');
    await h.driftPass();
    expect(h.queued).toEqual(new Set());
    const planned = h.planned();
    const writes = h.world.log.length;
    h.world.setSource('lb-1', 'lb-1-udp', 0);
    later(signalIntervalMs(DRIFT_MS) + 5_000);
    await h.driftPass();
    expect(h.checked).toMatchObject({ escalated: 1 });
    expect(h.queued).toEqual(new Set(['shop/p']));
    await h.reconcile('p');
    expect(h.world.source('lb-1', 'lb-1-udp')).toBe(1);
    expect(h.planned() - planned).toBe(1);
    expect(h.world.log.slice(writes).map((x) => x.step.kind)).toEqual(['SetListenerHealthCheckSource']);
    // Corrected and read back as written: nothing more to do.
    expect(h.queued).toEqual(new Set());
    expect(await h.reconcile('p')).toMatchObject({ requeueAfterMs: expect.any(Number) });
    expect(h.planned() - planned).toBe(1);
    expect(h.world.log.length - writes).toBe(1);
  });

  it("a full read that fails leaves the CLB due; older than its cycle, its policy is queued for it and its round's read reports the failure", async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    await h.reconcile('p');
    await h.driftPass();
    expect(h.queued).toEqual(new Set());
    const throttled = () => new ClbError({ code: 'RequestLimitExceeded', retryable: true, reason: 'Throttled', message: 'throttled', throttled: true, apiMessage: 'throttled' });
    h.world.readFaults.push(throttled());
    later(DRIFT_MS + 1_000);
    await h.driftPass();
    expect(h.checked).toMatchObject({ full: 1 });
    expect(h.queued).toEqual(new Set(['shop/p']));
    h.world.readFaults.push(throttled());
    const outcome = await h.reconcile('p');
    expect(outcome && 'retry' in outcome).toBe(true);
    expect(h.target('p', 'web')).toMatchObject({ verdict: 'Pending' });
    expect(JSON.stringify(h.policies.get('p')?.status)).toMatch(/throttled/);
    // The queue's retry: read, judged again.
    await h.reconcile('p');
    expect(h.target('p', 'web')).toMatchObject({ verdict: 'Mitigated' });
  });

  it('a drift the health cannot show (listeners without backends) is not found by the signal; the full re-read finds it', async () => {
    const h = harness('web');
    h.world.withoutBackends.add('lb-1');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    await h.driftPass();
    h.queued.clear();
    h.world.setSource('lb-1', 'lb-1-udp', 0);
    later(signalIntervalMs(DRIFT_MS));
    await h.driftPass();
    expect(h.checked).toMatchObject({ health: 1, full: 0, escalated: 0 });
    expect(h.queued).toEqual(new Set());
    later(DRIFT_MS);
    await h.driftPass();
    expect(h.checked).toMatchObject({ full: 1 });
    expect(h.queued).toEqual(new Set(['shop/p']));
    await h.reconcile('p');
    expect(h.world.source('lb-1', 'lb-1-udp')).toBe(1);
  });
});

describe('Work follows change: exact work at 1,000 targets under one policy (500 CLBs, 2 Services each)', () => {
  const N = 1_000;
  async function converged() {
    const h = harnessOf(Array.from({ length: N }, (_, i) => `svc-${i}`), 2);
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    // Its own annotation writes came back as Service events: the next round plans those targets and finds nothing to do.
    await h.reconcile('p');
    // A full cycle of drift reads finds every CLB as the executor left it.
    later(DRIFT_MS);
    await h.driftPass();
    expect(h.checked).toMatchObject({ full: N / 2 });
    expect(h.queued).toEqual(new Set());
    expect(h.policies.get('p')?.status?.counts).toMatchObject({ mitigated: N, total: N });
    return { h, planned: h.planned(), writes: h.world.log.length };
  }

  it('the first round plans every target once', async () => {
    const h = harnessOf(Array.from({ length: N }, (_, i) => `svc-${i}`), 2);
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    expect(h.planned()).toBe(N);
    // Its first round: every namespace it covers, and the prune.
    expect(h.reportCalls).toEqual([[['shop'], true]]);
  });

  it("an unchanged requeue plans nothing and writes nothing (status included)", async () => {
    const { h, planned, writes } = await converged();
    const status = h.policies.get('p')?.status;
    later(DRIFT_MS);
    h.reportCalls.length = 0;
    expect(await h.reconcile('p')).toMatchObject({ requeueAfterMs: expect.any(Number) });
    expect(h.planned()).toBe(planned);
    expect(h.reportCalls).toEqual([[[], false]]);
    expect(h.world.log).toHaveLength(writes);
    // The status object is the very one left: no write happened.
    expect(h.policies.get('p')?.status).toBe(status);
  });

  it("a Service edit re-plans only the targets of that Service's CLB", async () => {
    const { h, planned, writes } = await converged();
    h.edit('svc-500', { 'example.com/team': 'shop' });
    expect(h.queued).toEqual(new Set(['shop/p']));
    h.reportCalls.length = 0;
    await h.reconcile('p');
    expect(h.planned() - planned).toBe(2);
    expect(h.reportCalls).toEqual([[['shop'], false]]);
    expect(h.world.log).toHaveLength(writes);
  });

  it('a drift on one CLB re-plans only its targets and writes only its listeners', async () => {
    const { h, planned, writes } = await converged();
    h.world.setSource('lb-7', 'lb-7-tcp', 0);
    // Every CLB read in full again (the full cycle at this count): the drifted one differs.
    later(2 * DRIFT_MS);
    await h.driftPass();
    expect(h.queued).toEqual(new Set(['shop/p']));
    await h.reconcile('p');
    expect(h.planned() - planned).toBe(2);
    // Both Services on lb-7 plan the switch of its drifted listener (the fixture gives them the same ports); no other listener is written.
    const written = h.world.log.slice(writes).map((x) => (x.step.kind === 'SetListenerHealthCheckSource' ? `${x.step.loadBalancerId}/${x.step.listenerId}` : x.step.kind));
    expect(new Set(written)).toEqual(new Set(['lb-7/lb-7-tcp']));
    expect(h.world.source('lb-7', 'lb-7-tcp')).toBe(1);
  });

  it("a probe figure that moved queues its namespace's report (the reports read the remembered figures); none planned, none queued otherwise", async () => {
    let figure = '30 of 30 ok';
    const probe = { changed: () => undefined, forget: () => undefined, annotate: async <T extends object>(_on: boolean, outcomes: readonly T[]) => ({ outcomes: outcomes.map((o) => ({ ...o, measured: figure })) }) };
    const h = harnessOf(['svc-0', 'svc-1'], 1, probe);
    h.policies.set('p', policyOf('p', { mode: 'Audit' }));
    await h.reconcile('p');
    await h.reconcile('p');
    const planned = h.planned();
    h.reportCalls.length = 0;
    figure = '2 of 30 failed';
    await h.reconcile('p');
    await h.reconcile('p');
    expect(h.planned()).toBe(planned);
    expect(h.reportCalls).toEqual([[['shop'], false], [[], false]]);
    expect(h.target('p', 'svc-0')?.measured).toBe('2 of 30 failed');
  });

  it('a policy spec change plans every target again', async () => {
    const { h, planned } = await converged();
    h.policies.set('p', { ...policyOf('p', { mode: 'Enforce', revertOnDelete: true }), metadata: { ...policyOf('p', {}).metadata, generation: 2, finalizers: h.policies.get('p')?.metadata.finalizers ?? [] } });
    await h.reconcile('p');
    expect(h.planned() - planned).toBe(N);
  });
});

describe('PolicyController.reconcile after a restart (observations seeded from the checkpoint)', () => {
  /** Counts the CLB reads of the world, and how many steps had been applied when each was made. */
  function countReads(h: ReturnType<typeof harness>): { id: string; stepsBefore: number }[] {
    const reads: { id: string; stepsBefore: number }[] = [];
    const describe = h.world.reader.describeLoadBalancers.bind(h.world.reader);
    h.world.reader.describeLoadBalancers = async (ids, opts) => {
      for (const id of ids) reads.push({ id, stepsBefore: h.world.log.length });
      return describe(ids, opts);
    };
    return reads;
  }

  it('judges a converged target from the seeded observation: Ready, nothing read, nothing written', async () => {
    const before = harness('web');
    before.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await before.reconcile('p');
    expect(before.target('p', 'web')).toMatchObject({ verdict: 'Mitigated' });
    // The next leader: the same world (CLB, annotations, record), a new process whose observer holds the checkpoint.
    const after = harness('web');
    for (const [k, v] of before.world.listeners) after.world.listeners.set(k, v.map((l) => ({ ...l })));
    for (const [k, v] of before.world.annotations) after.world.annotations.set(k, { ...v });
    for (const [k, v] of before.world.records) after.world.records.set(k, v);
    const policy = before.policies.get('p') as LoopbackPolicy;
    after.policies.set('p', { ...policy, status: { ...policy.status } } as LoopbackPolicy);
    expect(after.observer.seed(before.observer.entries())).toBe(1);
    const reads = countReads(after);
    await after.reconcile('p');
    expect(reads).toEqual([]);
    expect(after.world.log).toEqual([]);
    expect(after.target('p', 'web')).toMatchObject({ verdict: 'Mitigated' });
    expect(after.policies.get('p')?.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
  });

  it('reads the CLB again and plans once more before writing from a seeded observation', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    // What the last leader saw: listeners since replaced (TKE rebuilt them). A plan made on it would write listeners
    // that no longer exist; the fresh read plans the real ones.
    h.observer.seed([
      {
        id: 'lb-1',
        at: Date.now() - 60_000,
        observation: { state: 'Found', clb: { loadBalancerId: 'lb-1', loadBalancerType: 'INTERNAL', addressIpVersion: 'IPV4', vips: ['10.0.0.10'], status: 1, forward: 1, passToTarget: false, tags: {}, listeners: [
          { listenerId: 'lb-1-tcp-old', protocol: 'TCP', port: 80, healthCheck: { sourceIpType: 0, healthSwitch: 1 } },
          { listenerId: 'lb-1-udp-old', protocol: 'UDP', port: 53, healthCheck: { sourceIpType: 0, healthSwitch: 1 } },
        ] } },
      },
    ]);
    const reads = countReads(h);
    await h.reconcile('p');
    expect(reads).toEqual([{ id: 'lb-1', stepsBefore: 0 }]);
    const written = h.world.log.flatMap((e) => (e.step.kind === 'SetListenerHealthCheckSource' ? [e.step.listenerId] : []));
    expect(written.sort()).toEqual(['lb-1-tcp', 'lb-1-udp']);
    expect([h.world.source('lb-1', 'lb-1-tcp'), h.world.source('lb-1', 'lb-1-udp')]).toEqual([1, 1]);
    expect(h.observer.seeded('lb-1')).toBe(false);
    expect(h.target('p', 'web')).toMatchObject({ verdict: 'Mitigated' });
  });

  it('reads a CLB again before writing when its observation (not seeded) is older than the bound', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Audit' }));
    await h.reconcile('p');
    const reads = countReads(h);
    later(31_000);
    h.policies.set('p', { ...policyOf('p', { mode: 'Enforce' }), metadata: { ...policyOf('p', { mode: 'Enforce' }).metadata, generation: 2 } });
    await h.reconcile('p');
    expect(reads[0]).toEqual({ id: 'lb-1', stepsBefore: 0 });
    expect(h.target('p', 'web')).toMatchObject({ verdict: 'Mitigated' });
  });
});
