// The operator's side of the probe as the policy controller and the queue use it (docs/probe.md §11): the plan built
// from the probing policies' selections (targets.ts reads them from the caches) and written only when it differs; reports judged against the current plan; a report's change
// routed to the CLBs of the targets whose state it changed; "since Enforce"; the contradiction's Event and condition;
// the metrics. Fakes only of loopguard's own interfaces (the plan store, the Event recorder).
import { describe, expect, it } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { ProbeReport, ProbeTargetResult } from '../../../src/api/probe.js';
import type { ServiceFacts } from '../../../src/model/facts.js';
import { EvidenceStore } from '../../../src/probe/evidence-store.js';
import { ProbeMetrics } from '../../../src/probe/metrics.js';
import { PROBE_PLAN_KEY, ProbeControl } from '../../../src/probe/probe-control.js';
import { withCondition } from '../../../src/api/conditions.js';
import type { ProbeSelection } from '../../../src/probe/plan-builder.js';
import type { StoredPlan } from '../../../src/probe/plan-store.js';

const svc = (name: string): ServiceFacts => ({ kind: 'Service', namespace: 'shop', name, type: 'LoadBalancer', ports: [{ port: 80, protocol: 'TCP' }], loadBalancerId: `lb-${name}`, loadBalancerIps: ['10.0.3.17'] });
const ON = { enabled: true, path: '/', targets: ['Service', 'Ingress'] as ('Service' | 'Ingress')[] };
const OFF = { ...ON, enabled: false };
const T0 = Date.parse('2026-11-29T08:00:00Z');

class FakeStore {
  plan: StoredPlan | undefined;
  writes = 0;
  version = 100;
  async read() {
    return this.plan;
  }
  async sync(text: string, create: boolean) {
    if (this.plan?.text === text) return this.plan;
    if (!this.plan && !create) return undefined;
    this.writes++;
    this.plan = { text, version: String(++this.version) };
    return this.plan;
  }
}

function setup() {
  let now = T0;
  // What targets.ts `probeSelections` reads from the caches: only live policies that probe.
  const selections = new Map<string, ProbeSelection>();
  const select = (owner: string, probe: typeof ON, targets: ServiceFacts[]) => (probe.enabled ? selections.set(owner, { probe, targets }) : selections.delete(owner));
  const routed: string[][] = [];
  const queued: string[] = [];
  const events: { reason: string; message: string; name: string }[] = [];
  const warnings: string[] = [];
  const registry = new Registry();
  const metrics = new ProbeMetrics(registry);
  const evidence = new EvidenceStore({ onChange: (clbs) => routed.push([...clbs]), sink: metrics, now: () => now });
  const store = new FakeStore();
  const control = new ProbeControl({
    store,
    evidence,
    queue: { add: (k) => queued.push(k) },
    selections: () => selections,
    events: { record: async (t, _type, reason, message) => void events.push({ reason, message, name: t.name }) },
    logger: { warn: (message) => void warnings.push(message) },
  });
  return { control, select, selections, evidence, store, routed, queued, events, registry, warnings, advance: (ms: number) => (now += ms), now: () => now };
}

const result = (id: string, failures: number, stalls = 0, probes = 30, p99Ms = failures > 0 ? 5000 : 3): ProbeTargetResult => ({ id, probes, failures, stalls, notRun: 0, p50Ms: 2, p99Ms });
const report = (node: string, planVersion: string, start: number, targets: ProbeTargetResult[], seconds = 300): ProbeReport => ({
  metadata: { name: node, namespace: 'loopguard-system' },
  spec: { node, pod: { name: `probe-${node}`, uid: 'u' }, planVersion, window: { start: new Date(start).toISOString(), end: new Date(start + seconds * 1000).toISOString(), seconds }, targets },
});
const outcome = (name: string, verdict: 'AtRisk' | 'Mitigated' | 'NotApplicable' | 'Conflict') => ({ assessment: { target: { kind: 'Service' as const, namespace: 'shop', name }, verdict }, plan: ['a step'] });

describe('the plan', () => {
  it('is built from the selections when its key comes up, written once, and not again for the same selection', async () => {
    const { control, select, selections, store, queued } = setup();
    select('shop/p', ON, [svc('cart')]);
    select('shop/q', OFF, [svc('other')]);
    control.changed(true);
    expect(queued).toEqual([PROBE_PLAN_KEY]);
    expect(await control.reconcile()).toBeUndefined();
    expect(store.writes).toBe(1);
    expect(JSON.parse(store.plan!.text).targets.map((t: { id: string }) => t.id)).toEqual(['Service/shop/cart:80']);
    await control.reconcile();
    expect(store.writes).toBe(1);
    select('shop/q', ON, [svc('other')]);
    await control.reconcile();
    expect(store.writes).toBe(2);
    expect(JSON.parse(store.plan!.text).targets.map((t: { id: string }) => t.id)).toEqual(['Service/shop/cart:80', 'Service/shop/other:80']);
    selections.delete('shop/q');
    control.forget('shop/q');
    expect(queued).toEqual([PROBE_PLAN_KEY, PROBE_PLAN_KEY]);
    await control.reconcile();
    expect(store.writes).toBe(3);
    expect(JSON.parse(store.plan!.text).targets.map((t: { id: string }) => t.id)).toEqual(['Service/shop/cart:80']);
  });

  it('a round queues the plan while anything probes: a policy that probes, or a plan that has entries to drop', async () => {
    const { control, select, selections, queued } = setup();
    control.changed(false);
    expect(queued).toEqual([]);
    select('shop/p', ON, [svc('cart')]);
    control.changed(true);
    await control.reconcile();
    // Probing turned off: that round must still drop the policy's entries.
    selections.delete('shop/p');
    control.changed(false);
    expect(queued).toEqual([PROBE_PLAN_KEY, PROBE_PLAN_KEY]);
    await control.reconcile();
    control.changed(false);
    expect(queued).toHaveLength(2);
  });

  it('no probing policy: no ConfigMap is created', async () => {
    const { control, select, store } = setup();
    select('shop/p', OFF, [svc('cart')]);
    await control.reconcile();
    expect(store.plan).toBeUndefined();
  });

  it('nothing to probe and no right to read the plan (an older Role): done, not retried; with targets it throws', async () => {
    const { control, select, store } = setup();
    store.read = async () => {
      throw new ApiException(403, 'forbidden', {}, {});
    };
    select('shop/p', OFF, [svc('cart')]);
    await control.reconcile();
    await control.reconcile();
    select('shop/p', ON, [svc('cart')]);
    await expect(control.reconcile()).rejects.toThrow('forbidden');
    expect(store.writes).toBe(0);
  });

  it('a plan stored before the restart that says the same is not written again, and its reports count', async () => {
    const first = setup();
    first.select('shop/p', ON, [svc('cart')]);
    await first.control.reconcile();
    const again = setup();
    again.store.plan = first.store.plan;
    again.select('shop/p', ON, [svc('cart')]);
    await again.control.reconcile();
    expect(again.store.writes).toBe(0);
    again.evidence.report(report('node-1', first.store.plan!.version, T0 - 300_000, [result('Service/shop/cart:80', 3)]), false);
    expect(again.evidence.judge({ kind: 'Service', namespace: 'shop', name: 'cart' }, 'AtRisk', false).latest?.failures).toBe(3);
  });
});

describe('reports', () => {
  const cart = { kind: 'Service' as const, namespace: 'shop', name: 'cart' };
  async function planned() {
    const s = setup();
    s.select('shop/p', ON, [svc('cart'), svc('shelf')]);
    await s.control.reconcile();
    return { ...s, version: s.store.plan!.version };
  }

  it('count when they ran the current plan and are recent; stale otherwise', async () => {
    const s = await planned();
    s.evidence.report(report('node-1', s.version, T0 - 300_000, [result('Service/shop/cart:80', 12)]), false);
    s.evidence.report(report('node-2', 'old', T0 - 300_000, [result('Service/shop/cart:80', 30)]), false);
    expect(s.evidence.judge(cart, 'AtRisk', false).latest).toMatchObject({ probes: 30, failures: 12, nodes: ['node-1'], full: true });
    s.advance(601_000);
    expect(s.evidence.judge(cart, 'AtRisk', false).kind).toBe('none');
  });

  it('route the CLBs of the targets whose state changed, not every report', async () => {
    const s = await planned();
    s.evidence.report(report('node-1', s.version, T0 - 300_000, [result('Service/shop/cart:80', 0), result('Service/shop/shelf:80', 0)]), false);
    expect(s.routed).toEqual([['lb-cart', 'lb-shelf']]);
    s.evidence.report(report('node-1', s.version, T0, [result('Service/shop/cart:80', 0), result('Service/shop/shelf:80', 0, 0, 29)]), false);
    expect(s.routed).toHaveLength(1);
    s.evidence.report(report('node-1', s.version, T0 + 300_000, [result('Service/shop/cart:80', 4), result('Service/shop/shelf:80', 0)]), false);
    expect(s.routed.at(-1)).toEqual(['lb-cart']);
    s.evidence.report(report('node-1', s.version, T0, []), true);
    expect(s.routed.at(-1)).toEqual(['lb-cart', 'lb-shelf']);
  });

  it('measure "since Enforce": windows that started after the verdict became Mitigated, each node window once', async () => {
    const s = await planned();
    expect(s.evidence.judge(cart, 'AtRisk', true).kind).toBe('none');
    s.advance(1000);
    const enforcedAt = s.now();
    expect(s.evidence.judge(cart, 'Mitigated', true).since).toBeUndefined();
    s.evidence.report(report('node-1', s.version, enforcedAt - 1, [result('Service/shop/cart:80', 12)]), false); // started before: not since
    s.evidence.report(report('node-1', s.version, enforcedAt + 1, [result('Service/shop/cart:80', 0, 0, 150)]), false);
    s.evidence.report(report('node-1', s.version, enforcedAt + 1, [result('Service/shop/cart:80', 0, 0, 150)]), false); // the same window again
    s.evidence.report(report('node-2', s.version, enforcedAt + 2, [result('Service/shop/cart:80', 0, 0, 150)]), false);
    const j = s.evidence.judge(cart, 'Mitigated', true);
    expect(j.since).toEqual({ label: 'Enforce', evidence: { probes: 300, failures: 0, stalls: 0, notRun: 0, p99Ms: 3, nodes: [], windows: 2, full: true } });
  });

  it('a window that started before the verdict changed is not judged against the new one (no false contradiction after Enforce)', async () => {
    const s = await planned();
    s.evidence.report(report('node-1', s.version, T0 - 300_000, [result('Service/shop/cart:80', 12)]), false);
    expect(s.evidence.judge(cart, 'AtRisk', true).latest).toMatchObject({ failures: 12, full: true });
    s.advance(1000);
    const enforcedAt = s.now();
    expect(s.evidence.judge(cart, 'Mitigated', true)).toEqual({ kind: 'none', verdict: 'Mitigated' });
    s.evidence.report(report('node-2', s.version, enforcedAt - 1, [result('Service/shop/cart:80', 3)]), false); // still the old state
    expect(s.evidence.judge(cart, 'Mitigated', true).kind).toBe('none');
    s.evidence.report(report('node-1', s.version, enforcedAt, [result('Service/shop/cart:80', 4)]), false);
    expect(s.evidence.judge(cart, 'Mitigated', true)).toMatchObject({ kind: 'contradiction', latest: { failures: 4, nodes: ['node-1'], windows: 1 } });
  });

  it('a verdict first seen (after a restart) is judged on every fresh window', async () => {
    const s = await planned();
    s.evidence.report(report('node-1', s.version, T0 - 300_000, [result('Service/shop/cart:80', 12)]), false);
    expect(s.evidence.judge(cart, 'Mitigated', true)).toMatchObject({ kind: 'contradiction', latest: { failures: 12 } });
  });

  it('feed per-target counters and the p99 histogram once per node window; a target that leaves the plan leaves the series', async () => {
    const s = await planned();
    expect(await s.registry.metrics()).toContain('loopguard_probe_failures_total{namespace="shop",kind="Service",name="cart"} 0');
    const r = report('node-1', s.version, T0 - 300_000, [result('Service/shop/cart:80', 12, 11, 30, 5190)]);
    s.evidence.report(r, false);
    s.evidence.report(r, false);
    const text = await s.registry.metrics();
    expect(text).toContain('loopguard_probe_failures_total{namespace="shop",kind="Service",name="cart"} 12');
    expect(text).toContain('loopguard_probe_stalls_total{namespace="shop",kind="Service",name="cart"} 11');
    expect(text).toContain('loopguard_probe_probes_total{namespace="shop",kind="Service",name="cart"} 30');
    expect(text).toContain('loopguard_probe_p99_seconds_bucket{le="5",namespace="shop",kind="Service",name="cart"} 0');
    expect(text).toContain('loopguard_probe_p99_seconds_bucket{le="10",namespace="shop",kind="Service",name="cart"} 1');
    s.select('shop/p', ON, [svc('shelf')]);
    await s.control.reconcile();
    expect(await s.registry.metrics()).not.toContain('name="cart"');
  });
});

describe('annotate', () => {
  async function contradicted() {
    const s = setup();
    s.select('shop/p', ON, [svc('cart'), svc('shelf')]);
    await s.control.reconcile();
    const v = s.store.plan!.version;
    s.evidence.report(report('node-1', v, T0 - 300_000, [result('Service/shop/cart:80', 12), result('Service/shop/shelf:80', 0)]), false);
    s.evidence.report(report('node-3', v, T0 - 300_000, [result('Service/shop/cart:80', 0, 2), result('Service/shop/shelf:80', 0)]), false);
    return s;
  }

  it('adds the measured line and nothing else: same assessments, same plans (evidence never changes what is written)', async () => {
    const s = await contradicted();
    const outcomes = [outcome('cart', 'Mitigated'), outcome('shelf', 'AtRisk'), outcome('lost', 'Conflict')];
    const { outcomes: out } = await s.control.annotate(true, outcomes, () => true);
    expect(out.map(({ measured: _m, ...rest }) => rest)).toEqual(outcomes);
    expect(out.map((o) => o.measured)).toEqual([
      'contradicts Mitigated: measured 12/60 failed, 2 stalled from node-1, node-3; p99 5.0 s',
      'not observed: measured 0/60 failed; p99 3 ms, nothing failed or stalled over a full window',
      undefined,
    ]);
    expect((await s.control.annotate(false, outcomes, () => true)).outcomes).toEqual(outcomes);
  });

  it('a contradiction: the MeasuredLoopback condition and one Warning Event per change of its nodes', async () => {
    const s = await contradicted();
    const { condition } = await s.control.annotate(true, [outcome('cart', 'Mitigated')], () => true);
    expect(condition).toMatchObject({ status: 'True', reason: 'LoopbackMeasured' });
    expect(condition?.message).toContain('Service/shop/cart (Mitigated): 12/60 failed, 2 stalled from node-1, node-3');
    await s.control.annotate(true, [outcome('cart', 'Mitigated')], () => true);
    expect(s.events).toEqual([
      { name: 'cart', reason: 'MeasuredLoopback', message: 'loopguard calls this Service Mitigated, but the probe measured 12/60 failed, 2 stalled from node-1, node-3; p99 5.0 s over a full window: calls to its CLB VIP from these nodes fail or stall (docs/probe.md)' },
    ]);
    s.evidence.report(report('node-3', s.store.plan!.version, T0, [result('Service/shop/cart:80', 0), result('Service/shop/shelf:80', 0)]), false);
    await s.control.annotate(true, [outcome('cart', 'Mitigated')], () => true);
    expect(s.events).toHaveLength(2);
    expect(s.events[1]?.message).toContain('from node-1;');
  });

  it('the condition joins the policy’s conditions, and leaves when the policy stops probing', () => {
    const now = new Date(T0);
    const ready = { type: 'Ready', status: 'True' as const, reason: 'Reconciled', message: 'ok', lastTransitionTime: '2026-11-29T07:00:00Z' };
    const set = withCondition([ready], 'MeasuredLoopback', { status: 'True', reason: 'LoopbackMeasured', message: 'm' }, now, 3);
    expect(set).toEqual([ready, { type: 'MeasuredLoopback', status: 'True', reason: 'LoopbackMeasured', message: 'm', observedGeneration: 3, lastTransitionTime: '2026-11-29T08:00:00Z' }]);
    expect(withCondition(set, 'MeasuredLoopback', undefined, now, 3)).toEqual([ready]);
  });
});
