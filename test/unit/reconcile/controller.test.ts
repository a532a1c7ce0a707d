// The policy controller's reconcile, end to end without an apiserver: informer caches, the CLB observer and the
// executor over the in-memory world (loopguard's own ClbReader and Effects interfaces), status and Events kept in
// memory. Twins of the integration suites' policy-level scenarios: Enforce converges, Audit writes nothing,
// conflict, deselect releases, deletion restores or is blocked, a failed CLB read retries; drift checks in their two
// tiers (drift-signal.ts), the health signal and the full re-read, over the world's DescribeTargetHealth.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { API_VERSION, FINALIZER, KIND, type LoopbackPolicy, type LoopbackPolicySpec, type LoopbackPolicyStatus } from '../../../src/api/loopbackpolicy.js';
import type { LoopbackRecord } from '../../../src/api/loopbackrecord.js';
import { CLUSTER_KIND, type ClusterLoopbackPolicy, type ClusterLoopbackPolicyStatus } from '../../../src/api/clusterloopbackpolicy.js';
import { ClbObserver } from '../../../src/cloud/clb-observer.js';
import { ClbError } from '../../../src/cloud/errors.js';
import { HealthSignal } from '../../../src/cloud/health-signal.js';
import { DriftScheduler, signalIntervalMs } from '../../../src/controllers/drift-signal.js';
import { PolicyController } from '../../../src/controllers/policy/policy-controller.js';
import { policyInputs } from '../../../src/controllers/policy/quiet.js';
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

function harness(...names: string[]) {
  const stopping = new AbortController();
  const world = new MemoryWorld();
  names.forEach((n, i) => world.addService(n, `lb-${i + 1}`));
  // As the operator wires them: the signal records the health of every full read as its next baseline. No batching
  // window: each round's check goes out at once.
  const healthSignal = new HealthSignal(world.reader, 0);
  const observer = new ClbObserver(healthSignal.recording(world.reader));
  world.observer = observer;
  const checked = { signal: 0, full: 0, escalated: 0 };
  let fullRounds = 0;
  /** Status fields another field manager keeps on the policy (server-side apply leaves them). */
  const foreign: Record<string, unknown> = {};
  const policies = new Map<string, LoopbackPolicy>();
  /** ClusterLoopbackPolicies, by name: they cover namespace shop, the only one. */
  const clusters = new Map<string, ClusterLoopbackPolicy>();
  const events: { target: string; reason: string; type: string }[] = [];
  const removed: string[] = [];
  const capabilities = new LearnedCapabilities();
  const eventSink = { record: async (t: { name: string }, type: string, reason: string) => void events.push({ target: t.name, reason, type }) };
  const executor = new Executor({ effects: world, capabilities, events: eventSink, logger, metrics: { driftCorrections: { inc: () => undefined } } as never });
  const records = (): LoopbackRecord[] => world.loopbackRecords();
  // As the informers' versions: they move whenever the targets, records or policies (but their status) changed.
  let held = '';
  let version = 0;
  const cachesVersion = () => {
    const now = JSON.stringify([world.v1Services(), records(), [...policies.values(), ...clusters.values()].map(policyInputs)]);
    if (now !== held) [held, version] = [now, version + 1];
    return version;
  };
  /** The namespaces' reports (namespace-reports.ts) as the controller sees them; off (OpenReports absent) unless a test turns them on. */
  const reports = {
    version: 0,
    enabled: async () => false,
    publish: async (): Promise<{ names: Map<string, string>; version: number }> => ({ names: new Map(), version: reports.version }),
    forget: async () => undefined,
    retry: (): Promise<void> => Promise.resolve(),
  };
  const controller = new PolicyController({
    reports,
    caches: {
      records,
      policy: (_ns, name) => policies.get(name),
      policies: () => [...policies.values()],
      services: () => world.v1Services(),
      ingresses: () => [],
      clusterPolicy: (name: string) => clusters.get(name),
      clusterPolicies: () => [...clusters.values()],
      namespace: (name: string) => ({ name }),
      namespaces: () => [{ name: 'shop' }],
      ownNamespace: 'loopguard-system',
      version: cachesVersion,
    },
    record: (t) => records().find((r) => r.spec.target.name === t.name && r.spec.target.kind === t.kind),
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
      list: async (kind: string) => (kind === 'Service' ? world.v1Services() : []),
    },
    records: {
      list: async () => records(),
      remove: async (r: LoopbackRecord) => {
        removed.push(r.spec.target.name);
        world.records.delete(r.spec.target.name);
      },
    },
    events: { ...eventSink, recordStanding: eventSink.record },
    // Reported once per full round: how the tests tell a full round from a quiet one (quiet.ts).
    metrics: { reportTargets: () => void fullRounds++, forgetTargets: () => undefined },
    logger,
    profile: () => PROFILES.ipvsNew,
    driftCheckIntervalMs: DRIFT_MS,
    driftTiers: { scheduler: new DriftScheduler(DRIFT_MS, FULL_READS_PER_S), signal: healthSignal, checked: (tier, clbs) => void (checked[tier] += clbs) },
    tkeGraceMs: GRACE_MS,
    executor,
    stopping: stopping.signal,
  });
  const reconcile = (name: string) => controller.reconcile(`shop/${name}`, new AbortController().signal);
  const reconcileCluster = (name: string) => controller.reconcile(`${CLUSTER_KIND}/${name}`, new AbortController().signal);
  const target = (policy: string, name: string) => policies.get(policy)?.status?.targets?.find((t) => t.name === name);
  return { world, policies, events, removed, reconcile, target, stopping, observer, checked, fullRounds: () => fullRounds, foreign, reports, clusters, reconcileCluster };
}

describe('PolicyController.reconcile over an in-memory world', () => {
  it('Enforce: a finalizer, the target mitigated in one round, Ready, and a requeue when the health signal is next due', async () => {
    const h = harness('web');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    const outcome = await h.reconcile('p');
    expect(h.policies.get('p')?.metadata.finalizers).toEqual([FINALIZER]);
    expect([h.world.source('lb-1', 'lb-1-tcp'), h.world.source('lb-1', 'lb-1-udp')]).toEqual([1, 1]);
    expect(h.world.annotations.get('web')?.[PREVENT]).toBe('true');
    expect(h.target('p', 'web')).toMatchObject({ verdict: 'Mitigated' });
    expect(h.policies.get('p')?.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
    // One CLB: its signal is due every half interval, its full re-read every interval; the sooner, jittered ±10 %.
    const after = (outcome as { requeueAfterMs: number }).requeueAfterMs;
    expect(after).toBeGreaterThanOrEqual(0.9 * signalIntervalMs(DRIFT_MS));
    expect(after).toBeLessThanOrEqual(1.1 * signalIntervalMs(DRIFT_MS));
    expect(h.events.map((e) => e.reason)).toContain('TargetMitigated');
    // The next round writes nothing.
    const writes = h.world.log.length;
    await h.reconcile('p');
    expect(h.world.log).toHaveLength(writes);
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
    expect(p.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'Terminating', message: expect.stringMatching(/VipReleased/) });
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
    await expect(h.reconcile('p')).rejects.toThrow(/deletion waits for the revert of 1 target/);
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
    h.policies.set('p', { ...policyOf('p', { mode: 'Audit' }), metadata: { ...policyOf('p', {}).metadata, generation: 2, finalizers: [FINALIZER] } });
    h.world.setSource('lb-1', 'lb-1-udp', 0);
    h.world.annotations.set('api', { 'service.kubernetes.io/loadbalance-id': 'lb-2' });
    // Half an interval on, the health signal is due: web's UDP backends are Dead (the source is back on the VIP
    // kube-proxy binds), so lb-1 is re-read in full in the same round; lb-2's health is unchanged.
    later(signalIntervalMs(DRIFT_MS));
    const before = h.world.log.length;
    await h.reconcile('p');
    expect(h.checked).toMatchObject({ signal: 2, full: 0, escalated: 1 });
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

describe('PolicyController drift checks in two tiers (drift-signal.ts)', () => {
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

  it('a converged policy: half an interval on, one DescribeTargetHealth for its CLBs and no full read; an interval on, every CLB re-read in full', async () => {
    const h = harness('web', 'api');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    const full = fullReads(h);
    h.world.healthReads.length = 0;
    later(signalIntervalMs(DRIFT_MS));
    await h.reconcile('p');
    expect(full).toEqual([]);
    expect(h.world.healthReads.map((ids) => [...ids].sort())).toEqual([['lb-1', 'lb-2']]);
    expect(h.checked).toMatchObject({ signal: 2, full: 0, escalated: 0 });
    // The full cycle: the drift interval, as 2 CLBs cost far less than the full-read share.
    h.world.healthReads.length = 0;
    later(DRIFT_MS - signalIntervalMs(DRIFT_MS));
    await h.reconcile('p');
    expect([...full].sort()).toEqual(['lb-1', 'lb-2']);
    // Their health comes with the full read (one call for both), not from a signal of its own.
    expect(h.world.healthReads).toHaveLength(1);
    expect(h.checked).toMatchObject({ signal: 2, full: 2, escalated: 0 });
    expect(h.world.log.filter((x) => x.step.kind === 'SetListenerHealthCheckSource')).toHaveLength(4);
  });

  it('a converged policy on unchanged inputs is not planned again: drift checks only, a full round when they or an object change, and once per interval', async () => {
    const h = harness('web', 'api');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    // Its own writes (annotations, records, status) are new inputs: one more full round, which finds nothing to do.
    await h.reconcile('p');
    const rounds = h.fullRounds();
    later(5_000);
    expect(await h.reconcile('p')).toMatchObject({ requeueAfterMs: expect.any(Number) });
    expect(h.fullRounds()).toBe(rounds);
    // A drift the health signal sees: its CLB is read in full, the generation moves, the same reconcile corrects it.
    h.world.setSource('lb-1', 'lb-1-udp', 0);
    later(signalIntervalMs(DRIFT_MS) + 5_000);
    await h.reconcile('p');
    expect(h.checked).toMatchObject({ escalated: 1 });
    expect(h.world.source('lb-1', 'lb-1-udp')).toBe(1);
    expect(h.fullRounds()).toBe(rounds + 1);
    // The correction's own effects (its record, the status) make full rounds until one sees them unchanged; then quiet.
    for (let i = 0; i < 3; i++) await h.reconcile('p');
    const settled = h.fullRounds();
    expect(settled - rounds).toBeLessThanOrEqual(4);
    await h.reconcile('p');
    expect(h.fullRounds()).toBe(settled);
    // An object changed (a new annotation on a Service): a full round.
    h.world.annotations.set('api', { ...h.world.annotations.get('api'), 'example.com/team': 'shop' });
    await h.reconcile('p');
    expect(h.fullRounds()).toBe(settled + 1);
    await h.reconcile('p');
    expect(h.fullRounds()).toBe(settled + 1);
    // Someone else edited the status (the stamp leaves the status out): a full round, which writes it back.
    const policy = h.policies.get('p') as LoopbackPolicy;
    const counts = policy.status?.counts;
    policy.status = { ...policy.status, counts: { ...counts!, mitigated: 0, atRisk: 2 } };
    await h.reconcile('p');
    expect(h.fullRounds()).toBe(settled + 2);
    expect(h.policies.get('p')?.status?.counts).toEqual(counts);
    // The next one finds the status written back (the round that wrote it could not know it landed); then quiet.
    await h.reconcile('p');
    await h.reconcile('p');
    expect(h.fullRounds()).toBe(settled + 3);
    // A field another field manager keeps in the status (server-side apply leaves it): one round writes, the next
    // sees it stay and takes it as it is; then quiet, not a full round per reconcile.
    h.foreign['note'] = 'kept by another field manager';
    policy.status = { ...policy.status, ...h.foreign };
    for (let i = 0; i < 4; i++) await h.reconcile('p');
    expect(h.fullRounds()).toBeLessThanOrEqual(settled + 5);
    const steady = h.fullRounds();
    await h.reconcile('p');
    await h.reconcile('p');
    expect(h.fullRounds()).toBe(steady);
    // Nothing changed for a whole drift interval: a full round anyway (a standing Event's refresh, the reports' resync).
    later(signalIntervalMs(DRIFT_MS) + 5_000 + DRIFT_MS);
    await h.reconcile('p');
    expect(h.fullRounds()).toBe(steady + 1);
  });

  it("a cluster policy and the namespaces' reports: a change to them (a write that got through) makes its next round full, its round's own first write does not; a retry is not waited for", async () => {
    const h = harness('web');
    h.reports.enabled = async () => true;
    // The round's own publish writes the reports for the first time: a change, as of that publish.
    h.reports.publish = async () => {
      h.reports.version++;
      return { names: new Map([['shop', 'loopguard']]), version: h.reports.version };
    };
    h.clusters.set('all', { apiVersion: API_VERSION, kind: CLUSTER_KIND, metadata: { name: 'all', uid: 'uid-all', generation: 1, creationTimestamp: new Date('2026-11-01T00:00:00Z') }, spec: { mode: 'Enforce' } });
    for (let i = 0; i < 3; i++) await h.reconcileCluster('all');
    expect(h.clusters.get('all')?.status?.byNamespace?.find((n) => n.namespace === 'shop')?.report).toBe('loopguard');
    const rounds = h.fullRounds();
    await h.reconcileCluster('all');
    expect(h.fullRounds()).toBe(rounds);
    // A retry that never ends (a webhook hanging on the Report): the quiet reconcile does not wait for it.
    let retries = 0;
    h.reports.retry = () => {
      retries++;
      return new Promise<void>(() => undefined);
    };
    later(5_000);
    await h.reconcileCluster('all');
    expect(retries).toBe(1);
    expect(h.fullRounds()).toBe(rounds);
    // A report written since (another policy's first publish, or that retry getting through): the next round is full.
    h.reports.version++;
    await h.reconcileCluster('all');
    expect(h.fullRounds()).toBe(rounds + 1);
    await h.reconcileCluster('all');
    await h.reconcileCluster('all');
    expect(h.fullRounds()).toBe(rounds + 1);
  });

  it("a LoopbackPolicy's status names no report: a change to the reports leaves it quiet", async () => {
    const h = harness('web');
    h.reports.enabled = async () => true;
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    for (let i = 0; i < 3; i++) await h.reconcile('p');
    const rounds = h.fullRounds();
    h.reports.version++;
    later(5_000);
    await h.reconcile('p');
    expect(h.fullRounds()).toBe(rounds);
  });

  it('a drift the health cannot show (listeners without backends) is not found by the signal; the full re-read corrects it', async () => {
    const h = harness('web');
    h.world.withoutBackends.add('lb-1');
    h.policies.set('p', policyOf('p', { mode: 'Enforce' }));
    await h.reconcile('p');
    h.world.setSource('lb-1', 'lb-1-udp', 0);
    later(signalIntervalMs(DRIFT_MS));
    await h.reconcile('p');
    expect(h.checked).toMatchObject({ signal: 1, full: 0, escalated: 0 });
    expect(h.world.source('lb-1', 'lb-1-udp')).toBe(0);
    later(DRIFT_MS - signalIntervalMs(DRIFT_MS));
    await h.reconcile('p');
    expect(h.checked).toMatchObject({ full: 1 });
    expect(h.world.source('lb-1', 'lb-1-udp')).toBe(1);
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
