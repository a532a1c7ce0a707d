// In-memory implementations of the interfaces clusterEffects writes through (the methods of loopguard's ClbClient,
// KubeWriter and RecordStore it uses), with the real CLB observer over the same in-memory CLB: one Ingress `front`
// (uid u1) in namespace shop, its TkeServiceConfig `cfg`, and CLB lb-1 with one TCP:80 listener whose health-check
// source is the VIP. Not a Kubernetes API: loopguard's own interfaces. Used by the effect tests of each step kind
// (effects.test.ts) and by the registry's round trip through the executor (step-kinds.test.ts).
import type { Originals } from '../../../src/api/originals.js';
import type { HealthCheck, ListenerInfo } from '../../../src/cloud/clb-client.js';
import { ClbObserver } from '../../../src/cloud/clb-observer.js';
import { ClbError } from '../../../src/cloud/errors.js';
import type { TargetRef } from '../../../src/model/facts.js';
import { LearnedCapabilities } from '../../../src/mitigation/capabilities.js';
import { clusterEffects, type EffectDeps } from '../../../src/mitigation/effects.js';
import { applyJsonPatch } from '../../../src/plan/config-patch.js';
import type { Step } from '../../../src/plan/steps.js';

export const OWNER = 'shop/p';
export const T: TargetRef = { kind: 'Ingress', namespace: 'shop', name: 'front' };
export const HC: HealthCheck = { HealthSwitch: 1, TimeOut: 2, IntervalTime: 5, HealthNum: 3, UnHealthNum: 3, SourceIpType: 0 };

export function clusterWorld() {
  const objects = new Map<string, { metadata: { uid: string; annotations: Record<string, string> } }>([['front', { metadata: { uid: 'u1', annotations: {} } }]]);
  const configs = new Map<string, { metadata: { resourceVersion: string }; spec: unknown }>([
    ['cfg', { metadata: { resourceVersion: '1' }, spec: { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'shop.example.com', rules: [{ url: '/' }] }] }] } } }],
  ]);
  const listeners = new Map<string, ListenerInfo[]>([['lb-1', [{ listenerId: 'lbl-1', name: 'l', protocol: 'TCP', port: 80, healthCheck: { ...HC }, rules: [] }]]]);
  const passToTarget = new Map<string, boolean>();
  const records = new Map<string, Originals>();
  const events: { type: string; reason: string; message: string; source: { component: string }; lastTimestamp: string }[] = [];
  const writes: string[] = [];
  /** EnvoyProxies' envoyService.annotations, by name (a Gateway's annotations are written there). */
  const envoyProxies = new Map<string, Record<string, string>>();
  const reserved: string[] = [];
  const refuseReserve: { error?: Error } = {};
  const capabilities = new LearnedCapabilities();
  const reader = {
    describeLoadBalancers: async () => [],
    describeTargetHealth: async () => [],
    describeListeners: async (id: string) => {
      const ls = listeners.get(id);
      if (!ls) throw new ClbError({ code: 'InvalidParameter.LBIdNotFound', retryable: false, reason: 'ClbNotFound', message: `CLB ${id} not found`, throttled: false, apiMessage: 'not found' });
      return structuredClone(ls);
    },
  };
  const observer = new ClbObserver(reader);
  const deps: EffectDeps = {
    writer: {
      get: async (_kind, _ns, name) => objects.get(name) as never,
      patchAnnotations: async (_kind, _ns, name, compute) => {
        const o = objects.get(name);
        if (!o) return undefined;
        for (const [k, v] of Object.entries(compute(o as never) ?? {})) {
          if (v === null) delete o.metadata.annotations[k];
          else o.metadata.annotations[k] = v as string;
        }
        return o as never;
      },
      envoyServiceAnnotations: async (_ns, name) => envoyProxies.get(name),
      patchEnvoyServiceAnnotations: async (_ns, name, set) => {
        const ep = envoyProxies.get(name);
        if (!ep) return false;
        for (const [k, v] of Object.entries(set)) {
          if (v === null) delete ep[k];
          else ep[k] = v;
        }
        writes.push(`envoyproxy ${name}`);
        return true;
      },
      patchConfig: async (_ns, name, plan) => {
        const c = configs.get(name);
        if (!c) return 'gone';
        const next = applyJsonPatch(c, plan(c.spec));
        configs.set(name, { metadata: { resourceVersion: String(Number(c.metadata.resourceVersion) + 1) }, spec: next.spec });
        writes.push(`config ${name}`);
        return 'written';
      },
      eventsOf: async () => events as never,
    },
    records: {
      update: async (_target, _owner, change) => {
        const next = change(records.get('front'));
        if (next === undefined) records.delete('front');
        else records.set('front', next);
      },
    },
    clb: {
      describeListeners: reader.describeListeners,
      modifyListenerHealthCheck: async (lb, id, hc) => {
        const l = listeners.get(lb)?.find((x) => x.listenerId === id);
        if (l) l.healthCheck = hc;
        writes.push(`listener ${lb}/${id} ${hc.SourceIpType}`);
        return { taskId: 't', attempts: 1 };
      },
      modifyLoadBalancerPassToTarget: async (lb, to) => {
        passToTarget.set(lb, to);
        writes.push(`pass ${lb} ${to}`);
        return { taskId: 't', attempts: 1 };
      },
      // The budget spent for TKE's syncs of what loopguard changes (paceTkeSync); `refuseReserve` makes it fail.
      reserve: async (action) => {
        if (refuseReserve.error) throw refuseReserve.error;
        reserved.push(action);
      },
    },
    observer,
    capabilities,
  };
  const apply = (step: Step, target: TargetRef = T) => clusterEffects(deps).apply(OWNER, target, step, new AbortController().signal);
  return { objects, configs, listeners, passToTarget, records, events, writes, reserved, refuseReserve, capabilities, observer, deps, apply };
}
