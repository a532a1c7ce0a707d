// An in-memory world for the reconcile-level tests: Services on CLBs with L4 listeners, their annotations and
// LoopbackRecords, and loopguard's Effects interface over them (what clusterEffects does against the CLB API and
// Kubernetes, for the L4 steps). Faults can be queued per step. Not a Kubernetes API: it implements loopguard's
// own interface, and gathers TargetSnapshots the way the operator's gather step does.
import type { V1Service } from '@kubernetes/client-node';
import type { Originals } from '../../../src/api/originals.js';
import { recordName, type LoopbackRecord } from '../../../src/api/loopbackrecord.js';
import type { ClbReader } from '../../../src/cloud/clb-client.js';
import type { ServiceFacts, TargetRef } from '../../../src/model/facts.js';
import type { Effects, StepResult } from '../../../src/mitigation/effects.js';
import { isEmptyOriginals, mergeOriginals, withoutFields } from '../../../src/api/originals.js';
import type { TargetSnapshot } from '../../../src/plan/snapshot.js';
import type { Step } from '../../../src/plan/steps.js';
import { clb, l4Listener, service } from '../model/fixtures.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';

interface Listener {
  id: string;
  protocol: string;
  port: number;
  source: 0 | 1;
}

interface Fault {
  match: (target: TargetRef, step: Step) => boolean;
  result: StepResult | Error;
}

export class MemoryWorld implements Effects {
  readonly annotations = new Map<string, Record<string, string>>();
  readonly listeners = new Map<string, Listener[]>();
  readonly records = new Map<string, { owner: string; record: Originals }>();
  readonly facts = new Map<string, ServiceFacts>();
  /** Every step applied (done or waiting), in order. */
  readonly log: { target: string; step: Step }[] = [];
  private readonly faults: Fault[] = [];
  /** Told of every source written, as clusterEffects tells the CLB observer (its cache is the post-write read). */
  observer?: { listenerSourceWritten(id: string, listenerId: string, to: 0 | 1): void };
  /** Labels per Service (selection). */
  readonly labels = new Map<string, Record<string, string>>();
  /** The next CLB reads fail with this (once each). */
  readonly readFaults: Error[] = [];
  /** CLBs whose listeners have no backends (DescribeTargetHealth shows nothing of them: a drift there changes no health). */
  readonly withoutBackends = new Set<string>();
  /** DescribeTargetHealth calls, by the ids asked. */
  readonly healthReads: string[][] = [];

  /** The Services as the informer cache holds them. */
  v1Services(): V1Service[] {
    return [...this.facts.keys()].map((name) => ({
      metadata: { namespace: 'shop', name, uid: `uid-${name}`, annotations: { ...this.annotations.get(name) }, labels: { ...this.labels.get(name) } },
      spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] },
      status: { loadBalancer: { ingress: [{ ip: '10.0.0.10' }] } },
    }));
  }

  /** The LoopbackRecords as the informer cache holds them. */
  loopbackRecords(): LoopbackRecord[] {
    return [...this.records].map(([name, { owner, record }]) => {
      const [namespace = '', policy = ''] = owner.split('/');
      return { metadata: { name: recordName({ kind: 'Service', namespace: 'shop', name }) }, spec: { target: { kind: 'Service', namespace: 'shop', name, uid: `uid-${name}` }, policy: { namespace, name: policy }, originals: record } };
    });
  }

  /** The CLB API's read side over the world (loopguard's ClbReader interface). */
  readonly reader: ClbReader = {
    describeLoadBalancers: async (ids) => {
      const fault = this.readFaults.shift();
      if (fault) throw fault;
      return ids.filter((id) => this.listeners.has(id)).map((id) => ({ loadBalancerId: id, name: id, type: 'INTERNAL', ipVersion: 'IPv4', addressIpVersion: 'IPV4', vips: ['10.0.0.10'], status: 1, forward: 1, tags: {}, passToTarget: false, clusterIds: [] }));
    },
    describeListeners: async (id) => (this.listeners.get(id) ?? []).map((l) => ({ listenerId: l.id, name: l.id, protocol: l.protocol, port: l.port, healthCheck: { HealthSwitch: 1, SourceIpType: l.source }, rules: [] })),
    // One backend per listener (the pseudo-rule of an L4 listener), Dead where a health check from the VIP is dropped.
    describeTargetHealth: async (ids) => {
      this.healthReads.push([...ids]);
      return ids.filter((id) => this.listeners.has(id)).map((id) => ({
        loadBalancerId: id,
        listeners: (this.listeners.get(id) ?? []).map((l) => ({
          listenerId: l.id,
          protocol: l.protocol,
          port: l.port,
          rules: [{ locationId: '', targets: this.withoutBackends.has(id) ? [] : [{ ip: '10.1.0.5', port: l.port, healthy: !this.dropped(id, l), status: this.dropped(id, l) ? 'Dead' : 'Alive' }] }],
        })),
      }));
    },
  };

  /**
   * Whether the listener's health checks are dropped: sourced from the VIP while kube-proxy binds it on the nodes,
   * which the TKE IPVS build the controller tests run with (PROFILES.ipvsNew) does for a Service with prevent-loopback.
   */
  private dropped(lb: string, l: Listener): boolean {
    if (l.source !== 0) return false;
    return [...this.annotations.values()].some((a) => a['service.kubernetes.io/loadbalance-id'] === lb && a[PREVENT] === 'true');
  }

  /** A LoadBalancer Service `name` (ETP Local) on CLB `lb` with a TCP :80 and a UDP :53 listener, sources from the VIP. */
  addService(name: string, lb: string, annotations: Record<string, string> = {}): void {
    this.facts.set(name, service({ name, externalTrafficPolicy: 'Local', ports: [{ port: 80, protocol: 'TCP' }, { port: 53, protocol: 'UDP' }] }, { 'service.kubernetes.io/loadbalance-id': lb }));
    this.annotations.set(name, { 'service.kubernetes.io/loadbalance-id': lb, ...annotations });
    this.listeners.set(lb, [
      { id: `${lb}-tcp`, protocol: 'TCP', port: 80, source: 0 },
      { id: `${lb}-udp`, protocol: 'UDP', port: 53, source: 0 },
    ]);
  }

  /** The next step matching `match` ends with `result` (a StepResult, or thrown). */
  fail(match: Fault['match'], result: StepResult | Error): void {
    this.faults.push({ match, result });
  }

  source(lb: string, listener: string): 0 | 1 | undefined {
    return this.listeners.get(lb)?.find((l) => l.id === listener)?.source;
  }

  setSource(lb: string, listener: string, to: 0 | 1): void {
    const l = this.listeners.get(lb)?.find((x) => x.id === listener);
    if (l) l.source = to;
  }

  /** What the gather step would read for Service `name` at `now`: its facts, its CLB, its record. */
  gather(name: string, now: Date): TargetSnapshot {
    const facts = this.facts.get(name) as ServiceFacts;
    const annotations = this.annotations.get(name) ?? {};
    const lb = annotations['service.kubernetes.io/loadbalance-id'] as string;
    const found = clb({ loadBalancerId: lb, listeners: (this.listeners.get(lb) ?? []).map((l) => l4Listener(l.id, l.protocol, l.port, l.source)) });
    const entry = this.records.get(name);
    return { facts: { ...facts, annotations }, clb: { state: 'Found', clb: found }, observedAt: now.getTime(), ownership: entry ? { originals: entry.record, owner: entry.owner } : {} };
  }

  async apply(owner: string, target: TargetRef, step: Step): Promise<StepResult> {
    const i = this.faults.findIndex((f) => f.match(target, step));
    if (i >= 0) {
      const [fault] = this.faults.splice(i, 1);
      if (fault?.result instanceof Error) throw fault.result;
      return fault?.result as StepResult;
    }
    if (!this.facts.has(target.name)) return { status: 'gone' };
    this.log.push({ target: target.name, step });
    const recordAs = (change: (current: Originals | undefined) => Originals, takeOver: boolean) => {
      const current = this.records.get(target.name);
      if (current && current.owner !== owner && !takeOver) return;
      const next = change(current?.record);
      if (isEmptyOriginals(next)) this.records.delete(target.name);
      else this.records.set(target.name, { owner, record: next });
    };
    switch (step.kind) {
      case 'RecordOriginals':
        recordAs((current) => mergeOriginals(current, step.originals), true);
        return { status: 'done' };
      case 'AnnotateTarget': {
        if (step.originals) recordAs((current) => mergeOriginals(withoutFields(current, step.forget ?? []), step.originals!), true);
        const annotations = { ...this.annotations.get(target.name) };
        for (const [k, v] of Object.entries(step.set)) {
          if (v === null) delete annotations[k];
          else annotations[k] = v;
        }
        this.annotations.set(target.name, annotations);
        if (step.forget && !step.originals) recordAs((current) => withoutFields(current, step.forget ?? []), false);
        return { status: 'done' };
      }
      case 'SetListenerHealthCheckSource':
        if (this.source(step.loadBalancerId, step.listenerId) === undefined) return { status: 'failed', error: { reason: 'ListenerNotFound', message: `listener ${step.listenerId} is gone`, permanent: false } };
        this.setSource(step.loadBalancerId, step.listenerId, step.to);
        this.observer?.listenerSourceWritten(step.loadBalancerId, step.listenerId, step.to);
        return { status: 'done' };
      case 'AwaitTke':
        return { status: 'waiting', note: `waiting for TKE (${step.reason})` };
      default:
        throw new Error(`the memory world has no L7 (${step.kind})`);
    }
  }
}
