// The step-kind registries: every kind has its pure half (shape, description: src/plan/steps/) and its effect half
// (effect, Event, metric: src/mitigation/steps/), each table keyed by kind and exhaustive; the executor says and
// leaves exactly what the kind's module says for each sample step (the lines Audit prints are user-visible and
// compared verbatim); and a step of each kind round-trips through the executor over clusterEffects on the in-memory
// world of cluster-world.ts.
import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import type { EventRecorder } from '../../../src/kube/events.js';
import { driftCorrection, STEP_EFFECTS, stepEvent, clusterEffects, type Effects, type StepEffect } from '../../../src/mitigation/effects.js';
import { Executor, type Execution } from '../../../src/mitigation/executor.js';
import { annotationsSet, describeStep, isTkeWait, maintainedInAudit, STEP_KINDS, waitSince, type Step, type StepKind, type StepKindPlan, type StepOf, type TargetPlan } from '../../../src/plan/steps.js';
import { recordOriginals } from '../../../src/plan/steps/record-originals.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { Metrics } from '../../../src/runtime/metrics.js';
import { clusterWorld, OWNER, T } from './cluster-world.js';
import { ALL_SAMPLES, STEP_SAMPLES } from './step-samples.js';

// A table that leaves out a kind is not a table of every kind: `npm run typecheck` fails on the line below if the
// tables' type stopped requiring every kind (the directive itself is then an error).
// @ts-expect-error AwaitTke and the other kinds are missing
const PARTIAL: { readonly [K in StepKind]: StepKindPlan<StepOf<K>> } = { RecordOriginals: recordOriginals };
void PARTIAL;

/** An executor over `effects`, with what it logs, records as Events and counts as drift corrections. */
function executor(effects: Effects, owner = OWNER) {
  const applied: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = JSON.parse(chunk.toString()) as { message?: string; step?: string };
      if (line.message === 'Step applied' && line.step) applied.push(line.step);
      done();
    },
  });
  const events: { type: string; reason: string; message: string }[] = [];
  const metrics = new Metrics({ processMetrics: false });
  const ex = new Executor({
    effects,
    capabilities: { learn: () => undefined },
    events: { record: async (_o, type, reason, message) => void events.push({ type, reason, message }) } as Pick<EventRecorder, 'record'>,
    logger: createLogger({ level: 'info', stream }),
    metrics,
  });
  const run = async (step: Step): Promise<Execution> => {
    const plan: TargetPlan = { target: T, layer: 'L7', purpose: 'Mitigate', steps: [step] };
    const [execution] = await ex.execute(owner, [plan], new AbortController().signal);
    return execution!;
  };
  const drift = async () => (await metrics.driftCorrections.get()).values.map((v) => [v.labels.kind, v.value]);
  return { run, applied, events, drift };
}

describe('the step-kind registries', () => {
  const kinds = Object.keys(STEP_KINDS).sort();

  it('hold the same kinds, each with a description, an effect and an Event, and every kind has samples', () => {
    expect(kinds).toHaveLength(7);
    expect(Object.keys(STEP_EFFECTS).sort()).toEqual(kinds);
    expect(Object.keys(STEP_SAMPLES).sort()).toEqual(kinds);
    for (const kind of kinds as StepKind[]) {
      expect(typeof STEP_KINDS[kind].describe).toBe('function');
      const effect = STEP_EFFECTS[kind] as StepEffect<Step>;
      expect(typeof effect.apply).toBe('function');
      expect(typeof effect.event).toBe('function');
      expect(STEP_SAMPLES[kind].length).toBeGreaterThan(0);
      for (const s of STEP_SAMPLES[kind]) expect(s.step.kind).toBe(kind);
    }
  });

  it.each(ALL_SAMPLES.map((s) => [s.step.kind, s.says, s] as const))('%s: "%s"', (_kind, says, sample) => {
    expect(describeStep(sample.step)).toBe(says);
    expect(stepEvent(sample.step)).toEqual(sample.event);
    expect(driftCorrection(sample.step)).toBe(sample.drift);
  });

  it('the executor logs, announces and counts each sample as its kind says', async () => {
    for (const sample of ALL_SAMPLES) {
      const x = executor({ apply: async () => ({ status: 'done' }) });
      const execution = await x.run(sample.step);
      expect(execution).toEqual({ plan: execution.plan, executed: [sample.step] });
      expect(x.applied).toEqual([sample.says]);
      expect(x.events).toEqual(sample.event ? [{ ...sample.event, message: `${sample.says} (LoopbackPolicy ${OWNER})` }] : []);
      expect(await x.drift()).toEqual(sample.drift ? [[sample.drift, 1]] : []);
    }
  });

  it('answer for the kind what the round and the executor ask of a step', () => {
    for (const { step } of ALL_SAMPLES) {
      expect(annotationsSet(step)).toEqual(step.kind === 'AnnotateTarget' ? step.set : {});
      expect(isTkeWait(step)).toBe(step.kind === 'AwaitTke');
      expect(waitSince(step)).toBe(step.kind === 'AwaitTke' ? step.since : undefined);
      expect(maintainedInAudit(step)).toBe(step.kind === 'SetListenerHealthCheckSource' && step.drift === true);
    }
    expect(isTkeWait(undefined)).toBe(false);
    expect(waitSince(undefined)).toBeUndefined();
  });
});

type World = ReturnType<typeof clusterWorld>;

/** One step of each kind with what it must have done to the in-memory world; typed per kind, so none is left out. */
const ROUND_TRIP: { readonly [K in StepKind]: { step: StepOf<K>; before?: (w: World) => void; waiting?: RegExp; check: (w: World) => void } } = {
  RecordOriginals: {
    step: { kind: 'RecordOriginals', originals: { v: 1, listeners: { 'lbl-1': { sourceIpType: 0 } } } },
    check: (w) => expect(w.records.get('front')).toEqual({ v: 1, listeners: { 'lbl-1': { sourceIpType: 0 } } }),
  },
  SetListenerHealthCheckSource: {
    step: { kind: 'SetListenerHealthCheckSource', loadBalancerId: 'lb-1', listenerId: 'lbl-1', protocol: 'TCP', port: 80, to: 1, drift: true },
    check: (w) => expect(w.writes).toEqual(['listener lb-1/lbl-1 1']),
  },
  SetLoadBalancerPassToTarget: {
    step: { kind: 'SetLoadBalancerPassToTarget', loadBalancerId: 'lb-1', to: true },
    check: (w) => expect(w.writes).toEqual(['pass lb-1 true']),
  },
  AnnotateTarget: {
    step: { kind: 'AnnotateTarget', set: { 'service.cloud.tencent.com/prevent-loopback': 'true' }, originals: { v: 1, annotations: { 'service.cloud.tencent.com/prevent-loopback': null } } },
    check: (w) => {
      expect(w.objects.get('front')?.metadata.annotations).toEqual({ 'service.cloud.tencent.com/prevent-loopback': 'true' });
      expect(w.records.get('front')?.annotations).toEqual({ 'service.cloud.tencent.com/prevent-loopback': null });
    },
  },
  DeclareInTkeServiceConfig: {
    step: { kind: 'DeclareInTkeServiceConfig', config: 'cfg', loadBalancerId: 'lb-1', edits: [{ kind: 'keepalive', protocol: 'HTTP', port: 80, value: 1 }] },
    check: (w) => expect(w.configs.get('cfg')?.spec).toMatchObject({ loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, keepaliveEnable: 1 }] } }),
  },
  RemoveFromTkeServiceConfig: {
    step: { kind: 'RemoveFromTkeServiceConfig', config: 'cfg', loadBalancerId: 'lb-1', removals: [{ edit: { kind: 'keepalive', protocol: 'HTTP', port: 80, value: 1 }, level: 'field' }] },
    before: (w) => {
      const listener = (w.configs.get('cfg')?.spec as { loadBalancer: { l7Listeners: Record<string, unknown>[] } }).loadBalancer.l7Listeners[0]!;
      listener.keepaliveEnable = 1;
    },
    check: (w) => {
      expect(w.writes).toEqual(['config cfg']);
      expect(w.configs.get('cfg')?.spec).toEqual({ loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/' }] }] }] } });
    },
  },
  AwaitTke: {
    step: { kind: 'AwaitTke', reason: 'SourceSwitched', loadBalancerId: 'lb-1' },
    waiting: /prevent-loopback/,
    check: (w) => expect(w.writes).toEqual([]),
  },
};

describe('a step of each kind through the executor over clusterEffects', () => {
  it.each(Object.entries(ROUND_TRIP))('%s', async (_kind, trip) => {
    const t = trip as { step: Step; before?: (w: World) => void; waiting?: RegExp; check: (w: World) => void };
    const w = clusterWorld();
    t.before?.(w);
    const x = executor(clusterEffects(w.deps));
    const execution = await x.run(t.step);
    expect(execution.error).toBeUndefined();
    expect(execution.executed).toEqual([t.step]);
    if (t.waiting) expect(execution.waiting).toMatch(t.waiting);
    else expect(execution.waiting).toBeUndefined();
    t.check(w);
    expect(x.applied).toEqual([describeStep(t.step)]);
    const event = stepEvent(t.step);
    expect(x.events).toEqual(event ? [{ ...event, message: `${describeStep(t.step)} (LoopbackPolicy ${OWNER})` }] : []);
  });

  it('a cluster policy\'s step Event names it as what it is (not "LoopbackPolicy ClusterLoopbackPolicy/all")', async () => {
    const [, trip] = Object.entries(ROUND_TRIP).find(([, t]) => stepEvent((t as { step: Step }).step) !== undefined)!;
    const t = trip as { step: Step; before?: (w: World) => void };
    const w = clusterWorld();
    t.before?.(w);
    const x = executor(clusterEffects(w.deps), 'ClusterLoopbackPolicy/all');
    await x.run(t.step);
    expect(x.events.map((e) => e.message)).toEqual([`${describeStep(t.step)} (ClusterLoopbackPolicy/all)`]);
  });
});
