// Reconcile-level twins of the integration scenarios, without an apiserver: the pure pipeline (planPolicy over a
// snapshot gathered from an in-memory world) and the executor carrying the plan out through loopguard's own
// Effects interface (memory-world.ts), pass after pass, as the operator's rounds do.
import { describe, expect, it } from '@jest/globals';
import type { LoopbackPolicySpec } from '../../../src/api/loopbackpolicy.js';
import { nextReconcile } from '../../../src/controllers/policy/requeue.js';
import { LearnedCapabilities } from '../../../src/mitigation/capabilities.js';
import { Executor, type Execution } from '../../../src/mitigation/executor.js';
import { planPolicy, type PolicyPlan } from '../../../src/plan/policy-plan.js';
import type { OrphanSnapshot } from '../../../src/plan/snapshot.js';
import type { TargetPlan } from '../../../src/plan/steps.js';
import { NOW, OWNER, snapshot } from './fixtures.js';
import { MemoryWorld } from './memory-world.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';
const DIRECT: LoopbackPolicySpec = { mode: 'Enforce' };
const TKE_FIRST: LoopbackPolicySpec = { mode: 'Enforce', l4: { sourceSwitch: 'TKEFirst' } };

interface Run {
  world: MemoryWorld;
  events: { reason: string; type: string; target: string }[];
  drift: number;
  capabilities: LearnedCapabilities;
  executor: Executor;
}

function setup(...names: string[]): Run {
  const world = new MemoryWorld();
  names.forEach((n, i) => world.addService(n, `lb-${i + 1}`));
  const run = { world, events: [] as Run['events'], drift: 0, capabilities: new LearnedCapabilities() } as Run;
  run.executor = new Executor({
    effects: world,
    capabilities: run.capabilities,
    events: { record: async (t, type, reason) => void run.events.push({ reason, type, target: t.name }) },
    logger: { info: () => undefined, warn: () => undefined } as never,
    metrics: { driftCorrections: { inc: () => void run.drift++ } } as never,
  });
  return run;
}

/** One pass of planning over what the world shows at `now`. */
function pass(run: Run, names: string[], opts: { spec?: LoopbackPolicySpec; now?: Date; orphans?: OrphanSnapshot[] } = {}): PolicyPlan {
  const now = opts.now ?? NOW;
  return planPolicy(snapshot(names.map((n) => run.world.gather(n, now)), { spec: opts.spec ?? DIRECT, extra: { now, orphans: opts.orphans ?? [] } }));
}

function execute(run: Run, plans: readonly TargetPlan[]): Promise<Execution[]> {
  return run.executor.execute(OWNER, plans, new AbortController().signal);
}

const kinds = (p: TargetPlan | undefined) => p?.steps.map((s) => s.kind);

async function converge(run: Run, name = 'web'): Promise<void> {
  await execute(run, pass(run, [name]).targets.map((t) => t.plan));
}

describe('the reconcile pipeline over an in-memory world', () => {
  it('first Enforce: originals recorded, both sources switched, then prevent-loopback; the next pass has nothing to do', async () => {
    const run = setup('web');
    const first = pass(run, ['web']);
    expect(first.targets[0]?.assessment.verdict).toBe('AtRisk');
    expect(kinds(first.targets[0]?.plan)).toEqual(['RecordOriginals', 'SetListenerHealthCheckSource', 'SetListenerHealthCheckSource', 'AnnotateTarget']);
    const [e] = await execute(run, first.targets.map((t) => t.plan));
    expect(e?.executed).toHaveLength(4);
    expect([run.world.source('lb-1', 'lb-1-tcp'), run.world.source('lb-1', 'lb-1-udp')]).toEqual([1, 1]);
    expect(run.world.annotations.get('web')?.[PREVENT]).toBe('true');
    expect(run.world.records.get('web')?.record.listeners).toEqual({ 'lb-1-tcp': { sourceIpType: 0 }, 'lb-1-udp': { sourceIpType: 0 } });
    expect(run.events.map((x) => x.reason)).toEqual(['HealthCheckSourceSwitched', 'HealthCheckSourceSwitched', 'PreventLoopbackAnnotated']);
    const second = pass(run, ['web']);
    expect(second.targets[0]?.assessment.verdict).toBe('Mitigated');
    expect(second.targets[0]?.plan.steps).toEqual([]);
  });

  it('a crash between steps: the next pass resumes where it stopped, and no original is lost', async () => {
    const run = setup('web');
    const [plan] = pass(run, ['web']).targets;
    // The process died after the first switch: the record and one source are written, nothing else.
    await execute(run, [{ ...(plan?.plan as TargetPlan), steps: plan?.plan.steps.slice(0, 2) ?? [] }]);
    expect(run.world.source('lb-1', 'lb-1-tcp')).toBe(1);
    const resumed = pass(run, ['web']).targets[0]?.plan;
    expect(resumed?.steps.filter((s) => s.kind === 'SetListenerHealthCheckSource').map((s) => s.kind === 'SetListenerHealthCheckSource' && s.listenerId)).toEqual(['lb-1-udp']);
    await execute(run, [resumed as TargetPlan]);
    expect(pass(run, ['web']).targets[0]?.plan.steps).toEqual([]);
    // The original of the listener switched before the crash is still the VIP's.
    expect(run.world.records.get('web')?.record.listeners?.['lb-1-tcp']).toEqual({ sourceIpType: 0 });
  });

  it('drift: a source put back on the VIP is corrected alone, with a Warning and the drift metric', async () => {
    const run = setup('web');
    await converge(run);
    run.events.length = 0;
    run.world.setSource('lb-1', 'lb-1-udp', 0);
    const [t] = pass(run, ['web']).targets;
    expect(t?.plan.steps).toEqual([expect.objectContaining({ kind: 'SetListenerHealthCheckSource', listenerId: 'lb-1-udp', to: 1, drift: true })]);
    await execute(run, [t?.plan as TargetPlan]);
    expect(run.world.source('lb-1', 'lb-1-udp')).toBe(1);
    expect(run.events).toEqual([{ reason: 'DriftCorrected', type: 'Warning', target: 'web' }]);
    expect(run.drift).toBe(1);
  });

  it('release: a target the policy no longer manages gets every original back, and its record goes', async () => {
    const run = setup('web');
    await converge(run);
    const g = run.world.gather('web', NOW);
    const plan = pass(run, [], { orphans: [{ facts: g.facts, ownership: g.ownership ?? {} }] });
    expect(plan.releases).toHaveLength(1);
    await execute(run, plan.releases);
    // prevent-loopback off, its time recorded; the sources stay on 100.64 until kube-proxy has had the grace period.
    expect(run.world.annotations.get('web')?.[PREVENT]).toBeUndefined();
    expect([run.world.source('lb-1', 'lb-1-tcp'), run.world.source('lb-1', 'lb-1-udp')]).toEqual([1, 1]);
    const orphan = () => {
      const o = run.world.gather('web', NOW);
      return [{ facts: o.facts, ownership: o.ownership ?? {} }];
    };
    expect(kinds(pass(run, [], { orphans: orphan(), now: new Date(NOW.getTime() + 9_999) }).releases[0])).toEqual(['AwaitTke']);
    await execute(run, pass(run, [], { orphans: orphan(), now: new Date(NOW.getTime() + 10_000) }).releases);
    expect([run.world.source('lb-1', 'lb-1-tcp'), run.world.source('lb-1', 'lb-1-udp')]).toEqual([0, 0]);
    expect(run.world.annotations.get('web')?.[PREVENT]).toBeUndefined();
    expect(run.world.records.has('web')).toBe(false);
    expect(pass(run, [], { orphans: [] }).releases).toEqual([]);
  });

  it('TKE late (TKEFirst): prevent-loopback first and a wait; past the grace period loopguard switches the sources itself, saying why', async () => {
    const run = setup('web');
    const [asked] = pass(run, ['web'], { spec: TKE_FIRST }).targets;
    expect(kinds(asked?.plan)).toEqual(['AnnotateTarget', 'AwaitTke']);
    const [e] = await execute(run, [asked?.plan as TargetPlan]);
    expect(e?.waiting).toMatch(/SourceSwitched/);
    // Within the grace period: still waiting, nothing written.
    expect(kinds(pass(run, ['web'], { spec: TKE_FIRST, now: new Date(NOW.getTime() + 5_000) }).targets[0]?.plan)).toEqual(['AwaitTke']);
    // TKE never switched: after the grace period, loopguard does.
    const [late] = pass(run, ['web'], { spec: TKE_FIRST, now: new Date(NOW.getTime() + 11_000) }).targets;
    const switches = late?.plan.steps.filter((s) => s.kind === 'SetListenerHealthCheckSource') ?? [];
    expect(switches).toHaveLength(2);
    for (const s of switches) expect(s.kind === 'SetListenerHealthCheckSource' && s.why).toMatch(/TKE did not switch it/);
    await execute(run, [late?.plan as TargetPlan]);
    expect(pass(run, ['web'], { spec: TKE_FIRST, now: new Date(NOW.getTime() + 12_000) }).targets[0]?.plan.steps).toEqual([]);
  });

  it('a transient and a permanent failure in one chunk: each is its own target\'s outcome; the permanent one warns, the round retries', async () => {
    const run = setup('a', 'b');
    run.world.fail((t, s) => t.name === 'a' && s.kind === 'SetListenerHealthCheckSource', { status: 'failed', error: { reason: 'ClbBusy', message: 'the CLB is busy', permanent: false } });
    run.world.fail((t, s) => t.name === 'b' && s.kind === 'SetListenerHealthCheckSource', { status: 'failed', error: { reason: 'PermissionDenied', message: 'grant clb:ModifyListener', permanent: true } });
    const plan = pass(run, ['a', 'b']);
    const [a, b] = await execute(run, plan.targets.map((t) => t.plan));
    expect(a?.error).toMatchObject({ reason: 'ClbBusy', permanent: false });
    expect(b?.error).toMatchObject({ reason: 'PermissionDenied', permanent: true });
    // Each stopped at its failed step: the record is written, prevent-loopback is not.
    expect(a?.executed.map((s) => s.kind)).toEqual(['RecordOriginals']);
    expect(run.world.annotations.get('b')?.[PREVENT]).toBeUndefined();
    expect(run.events).toEqual([{ reason: 'PermissionDenied', type: 'Warning', target: 'b' }]);
    const outcomes = plan.targets.map((t, i) => ({ assessment: t.assessment, ...([a, b][i]?.error ? { error: [a, b][i]!.error! } : {}) }));
    const next = nextReconcile({ outcomes, releases: [], waitsOnTke: false, streak: 0, driftCheckIntervalMs: 600_000, now: NOW.getTime(), jitter: (ms) => ms });
    expect('retry' in next.outcome).toBe(true);
  });

  it('a step that throws is that target\'s failure, classified, never an exception of the round', async () => {
    const run = setup('a', 'b');
    run.world.fail((t, s) => t.name === 'a' && s.kind === 'RecordOriginals', new Error('connection reset'));
    const [a, b] = await execute(run, pass(run, ['a', 'b']).targets.map((t) => t.plan));
    expect(a?.executed).toEqual([]);
    expect(a?.error?.message).toMatch(/connection reset/);
    expect(b?.error).toBeUndefined();
    expect(b?.executed).toHaveLength(4);
  });

  it('a missing 100.64 capability is learned, and the next pass plans no switch while it holds', async () => {
    const run = setup('web');
    run.world.fail((_t, s) => s.kind === 'SetListenerHealthCheckSource', { status: 'failed', error: { reason: 'HealthCheckSourceCapabilityMissing', message: 'refused', permanent: true } });
    const [e] = await execute(run, pass(run, ['web']).targets.map((t) => t.plan));
    expect(e?.error?.reason).toBe('HealthCheckSourceCapabilityMissing');
    expect(run.capabilities.snapshot().range100_64Rejected).toBe('refused');
    // The next pass knows it: no switch is planned while the refusal holds.
    const next = planPolicy({ ...snapshot([run.world.gather('web', NOW)], { spec: DIRECT }), capabilities: run.capabilities.snapshot() });
    expect(next.targets[0]?.plan.steps.some((s) => s.kind === 'SetListenerHealthCheckSource' && s.to === 1)).toBe(false);
  });

  it('a target deleted mid-plan is gone, not failed; a shutdown stops before the next step', async () => {
    const run = setup('web');
    const plans = pass(run, ['web']).targets.map((t) => t.plan);
    run.world.facts.delete('web');
    const [gone] = await execute(run, plans);
    expect(gone?.gone).toBe(true);
    const again = setup('web');
    const stopping = new AbortController();
    stopping.abort();
    const executor = new Executor({ effects: again.world, capabilities: again.capabilities, events: { record: async () => undefined }, logger: { info: () => undefined, warn: () => undefined } as never, metrics: { driftCorrections: { inc: () => undefined } } as never, stopping: stopping.signal });
    const [stopped] = await executor.execute(OWNER, pass(again, ['web']).targets.map((t) => t.plan), new AbortController().signal);
    expect(stopped?.stopped).toEqual({ step: expect.objectContaining({ kind: 'RecordOriginals' }), inFlight: false });
    expect(again.world.log).toEqual([]);
  });
});
