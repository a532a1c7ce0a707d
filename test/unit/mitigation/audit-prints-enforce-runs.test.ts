// "Audit prints the plan Enforce carries out": for the same target, the plan lines an Audit status shows are the
// steps the executor then applies in Enforce, in the same order, and the CLB ends as the plan says. The executor runs
// against in-memory implementations of loopguard's own effect interfaces (writer, records, CLB client); nothing of
// Kubernetes is faked. Replaces two table tests that compared assessTarget across modes, which cannot differ (the
// assessment does not read the mode), so they could never fail.
import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import type { Originals } from '../../../src/api/originals.js';
import type { ClbClient, HealthCheck, ListenerInfo, LoadBalancerInfo } from '../../../src/cloud/index.js';
import { ClbObserver } from '../../../src/cloud/clb-observer.js';
import type { EventRecorder } from '../../../src/kube/events.js';
import type { RecordStore } from '../../../src/kube/record-store.js';
import type { KubeWriter } from '../../../src/kube/writer.js';
import { LearnedCapabilities } from '../../../src/mitigation/capabilities.js';
import { clusterEffects } from '../../../src/mitigation/effects.js';
import { Executor, remainingSteps } from '../../../src/mitigation/executor.js';
import { assessTarget } from '../../../src/model/assessment.js';
import { buildPolicyStatus } from '../../../src/model/status.js';
import { planTarget } from '../../../src/plan/policy-plan.js';
import { describeStep } from '../../../src/plan/steps.js';
import { createLogger } from '../../../src/runtime/logger.js';
import { Metrics } from '../../../src/runtime/metrics.js';
import { clb, context, l4Listener, service } from '../model/fixtures.js';

const LB = 'lb-abc';
const OWNER = 'shop/protect';
const NONE_REJECTED = { keepalive: false, range100_64: false };

/** One CLB in memory: listeners with full HealthCheck structs; every accepted write is logged. */
function memoryClb(listeners: ListenerInfo[]) {
  const writes: string[] = [];
  const lb: LoadBalancerInfo = { loadBalancerId: LB, name: 'web', type: 'INTERNAL', ipVersion: 'IPv4', addressIpVersion: 'IPV4', vips: ['10.0.0.10'], status: 1, forward: 1, tags: {}, passToTarget: false, clusterIds: [] };
  const client: Pick<ClbClient, 'describeLoadBalancers' | 'describeListeners' | 'describeTargetHealth' | 'modifyListenerHealthCheck' | 'reserve'> = {
    describeLoadBalancers: async (ids) => (ids.includes(LB) ? [lb] : []),
    describeListeners: async () => listeners.map((l) => ({ ...l, healthCheck: { ...l.healthCheck } })),
    describeTargetHealth: async () => [],
    modifyListenerHealthCheck: async (_lb: string, listenerId: string, hc: HealthCheck) => {
      const l = listeners.find((x) => x.listenerId === listenerId);
      if (!l) throw new Error(`no listener ${listenerId}`);
      l.healthCheck = hc;
      writes.push(`${listenerId}:${hc.SourceIpType}`);
      return { taskId: `task-${writes.length}`, attempts: 1 };
    },
    // The budget an annotation spends for TKE's sync of it (paceTkeSync): nothing to pace here.
    reserve: async () => undefined,
  };
  return { client: client as ClbClient, listeners, writes };
}

/** The Service's annotations and its record, in memory, with the order of every write. */
function memoryTarget(annotations: Record<string, string>) {
  const log: string[] = [];
  let record: Originals | undefined;
  const object = { metadata: { uid: 'u-1', annotations } };
  const writer: Pick<KubeWriter, 'get' | 'patchAnnotations' | 'eventsOf'> = {
    get: async () => object as never,
    eventsOf: async () => [],
    patchAnnotations: async (_k, _ns, _n, compute) => {
      for (const [k, v] of Object.entries(compute(object as never) ?? {})) {
        if (v === null) delete annotations[k];
        else annotations[k] = v;
        log.push(`annotate ${k}=${v}`);
      }
      return object as never;
    },
  };
  const records: Pick<RecordStore, 'update'> = {
    update: async (_t, _owner, change) => {
      record = change(record);
      log.push('record');
    },
  };
  return { writer: writer as KubeWriter, records: records as RecordStore, log, annotations, record: () => record };
}

function fullHealthCheck(source: 0 | 1): HealthCheck {
  return { HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, CheckType: 'TCP', SourceIpType: source };
}

function tcpListener(listenerId: string, port: number, source: 0 | 1): ListenerInfo {
  return { listenerId, name: `TCP-${port}`, protocol: 'TCP', port, healthCheck: fullHealthCheck(source), rules: [] };
}

async function runEnforce(plan: Parameters<Executor['execute']>[1][number], deps: { clb: ClbClient; writer: KubeWriter; records: RecordStore }) {
  const applied: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = JSON.parse(chunk.toString()) as { message?: string; step?: string };
      if (line.message === 'Step applied' && line.step) applied.push(line.step);
      done();
    },
  });
  const observer = new ClbObserver(deps.clb);
  await observer.observe([LB], 0);
  const capabilities = new LearnedCapabilities();
  const executor = new Executor({
    effects: clusterEffects({ ...deps, observer, capabilities }),
    capabilities,
    events: { record: async () => undefined } as unknown as EventRecorder,
    logger: createLogger({ level: 'info', stream }),
    metrics: new Metrics(),
  });
  const [execution] = await executor.execute(OWNER, [plan], new AbortController().signal);
  return { applied, execution: execution! };
}

describe('the plan Audit prints is the plan Enforce carries out', () => {
  const now = new Date('2026-11-25T12:00:00Z');

  it('L4, two VIP-sourced listeners, prevent-loopback supported: every printed step is applied, in order', async () => {
    const svc = service({ externalTrafficPolicy: 'Local', ports: [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP' }] });
    const facts = clb({ listeners: [l4Listener('lbl-80', 'TCP', 80, 0), l4Listener('lbl-443', 'TCP', 443, 0)] });
    const assessment = assessTarget(svc, context({ clb: facts, policy: { mode: 'Audit' } }));
    expect(assessment.verdict).toBe('AtRisk');
    const plan = planTarget({ owner: OWNER, rejected: NONE_REJECTED, now, graceMs: 10_000 }, { assessment, annotations: svc.annotations, clb: facts, observedAt: now.getTime() });

    // What Audit prints.
    const status = buildPolicyStatus({ mode: 'Audit', outcomes: [{ assessment, plan: plan.steps.map(describeStep) }], now });
    const printed = status.targets?.[0]?.plan ?? [];
    expect(printed.length).toBeGreaterThanOrEqual(4); // originals, two switches, the annotation
    expect(status.conditions?.find((c) => c.type === 'Ready')?.message).toContain(`would carry out ${printed.length} steps`);

    // What Enforce does with the same plan.
    const cloud = memoryClb([
      tcpListener('lbl-80', 80, 0),
      tcpListener('lbl-443', 443, 0),
    ]);
    const target = memoryTarget({ ...svc.annotations });
    const { applied, execution } = await runEnforce(plan, { clb: cloud.client, writer: target.writer, records: target.records });

    expect(execution.error).toBeUndefined();
    expect(applied).toEqual(printed);
    expect(cloud.writes.sort()).toEqual(['lbl-443:1', 'lbl-80:1']);
    // Every other HealthCheck field went back as read: only the source changed.
    for (const l of cloud.listeners) expect(l.healthCheck).toEqual(fullHealthCheck(1));
    expect(target.annotations['service.cloud.tencent.com/prevent-loopback']).toBe('true');
    // Originals before any write; the annotation last, after both sources switched (its record entry just before it).
    expect(target.log).toEqual(['record', 'record', 'annotate service.cloud.tencent.com/prevent-loopback=true']);
    expect(target.record()?.listeners).toEqual({ 'lbl-80': { sourceIpType: 0 }, 'lbl-443': { sourceIpType: 0 } });
  });

  it('a plan that ends at a wait for TKE: applied + still to do = printed, and nothing past the wait runs', async () => {
    // The user's own prevent-loopback asks TKE: loopguard records the originals and waits for TKE's grace period.
    const annotations = { 'service.cloud.tencent.com/prevent-loopback': 'true' };
    const svc = service({ externalTrafficPolicy: 'Local' }, annotations);
    const facts = clb({ listeners: [l4Listener('lbl-80', 'TCP', 80, 0)] });
    const assessment = assessTarget(svc, context({ clb: facts, policy: { mode: 'Audit' } }));
    const plan = planTarget({ owner: OWNER, rejected: NONE_REJECTED, now, graceMs: 10_000 }, { assessment, annotations: svc.annotations, clb: facts, observedAt: now.getTime() });
    const printed = buildPolicyStatus({ mode: 'Audit', outcomes: [{ assessment, plan: plan.steps.map(describeStep) }], now }).targets?.[0]?.plan ?? [];
    expect(plan.steps.map((s) => s.kind)).toContain('AwaitTke');

    const cloud = memoryClb([tcpListener('lbl-80', 80, 0)]);
    const target = memoryTarget({ ...svc.annotations });
    const { applied, execution } = await runEnforce(plan, { clb: cloud.client, writer: target.writer, records: target.records });

    expect(execution.waiting).toMatch(/waiting for TKE to switch the health-check sources/);
    // The wait is applied (it asked) and still to do (it is asked again next round): the plan, with the wait once.
    expect(applied).toEqual(printed);
    expect(remainingSteps(execution).map(describeStep)).toEqual(printed.slice(-1));
    expect(cloud.writes).toEqual([]); // TKE's grace period: loopguard writes no source yet
  });
});
