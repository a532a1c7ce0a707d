// loopguard in both readings of a TkeServiceConfig healthCheck without its required `enable` (docs/tencent-cloud.md
// §1; sim/README.md "healthCheck without enable"): TKE refuses the whole config with a Warning Event, or it switches
// the rule's check off. In each world, Enforce over an Ingress that names a hand-made TkeServiceConfig:
//  - a config without health checks: every rule fragment loopguard adds or edits carries `enable` = the CLB rule's
//    switch, the CLB rules end with their check on and the 100.64 source, TKE raises no refusal, and deleting the
//    policy leaves the config exactly as it was and the CLB sources as they were;
//  - the user's own fragment with a healthCheck but no `enable` (broken before loopguard came): loopguard completes it
//    with the CLB's current switch (on where TKE refused the config, off where TKE read it as off), so nothing is
//    switched by loopguard; the revert takes out exactly what it added.
// Without `enable` in loopguard's fragments, the first case fails in both worlds: `refused` never applies the source
// (loopguard reports TKE's Warning), `switchOff` ends with the rules' checks off.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, CustomObjectsApi, NetworkingV1Api } from '@kubernetes/client-node';
import type { AdminLoadBalancer } from '../../sim/clb-emulator/admin-types.js';
import type { MissingEnableReading } from '../../sim/tke-simulator/index.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { startLocalTke, type LocalTke } from '../support/local-tke.js';
import { applyPolicy, deletePolicy, policyManifest, reportedStatus, waitForPolicy, type PolicyRef } from '../support/policy.js';
import { lbIngress, PRIVATE_INGRESS } from '../support/workload.js';

const LB_ID = 'kubernetes.io/ingress.qcloud-loadbalance-id';
const NAMED = 'ingress.cloud.tencent.com/tke-service-config';
const TSC = { group: 'cloud.tencent.com', version: 'v1alpha1', plural: 'tkeserviceconfigs' };
/** The Warning the simulator's `refused` reading raises (sim/tke-simulator/health-check-enable.ts). */
const REFUSAL = /field "enable" is required/;

interface RuleFragment {
  url: string;
  healthCheck?: Record<string, unknown>;
  [k: string]: unknown;
}
interface Spec {
  loadBalancer: { l7Listeners: { protocol: string; port: number; domains?: { domain?: string; rules?: RuleFragment[] }[] }[] };
}
/** A rule as the CLB has it: where, its switch and source. */
interface ClbRule {
  where: string;
  healthSwitch: number | undefined;
  source: number;
  interval: number | undefined;
}

const READINGS: { reading: MissingEnableReading; brokenSwitchBefore: 0 | 1 }[] = [
  // TKE refuses the user's broken config: the CLB keeps the check TKE created (on).
  { reading: 'refused', brokenSwitchBefore: 1 },
  // TKE reads the user's fragment as "check off".
  { reading: 'switchOff', brokenSwitchBefore: 0 },
];

describe.each(READINGS)('healthCheck without enable read as $reading', ({ reading, brokenSwitchBefore }) => {
  let tke: LocalTke;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const logs = () => `--- operator logs (tail) ---\n${tke.operator!.logs().slice(-4000)}`;
  const figures: Record<string, unknown> = { reading };

  beforeAll(async () => {
    tke = await startLocalTke({
      simulator: { missingHealthCheckEnable: reading },
      emulator: { capabilities: { l7KeepaliveSnat: true } },
      operator: { extraArgs: ['--drift-check-interval=2s'] },
    });
  });

  afterAll(async () => {
    console.log(`[worlds-enable] ${JSON.stringify(figures)}`);
    await tke?.stop();
  });

  const lbOf = async (ns: string, name: string): Promise<AdminLoadBalancer> => {
    const id = await waitFor(`CLB of ${name}`, async () => (await net.readNamespacedIngress({ namespace: ns, name })).metadata?.annotations?.[LB_ID]);
    return tke.emulator.admin.getLoadBalancer(id);
  };
  const clbRules = async (ns: string, name: string): Promise<ClbRule[]> =>
    (await lbOf(ns, name)).Listeners.flatMap((l) =>
      l.Rules.map((r) => ({ where: `${r.Domain}${r.Url}`, healthSwitch: r.HealthCheck.HealthSwitch ?? undefined, source: r.HealthCheck.SourceIpType ?? 0, interval: r.HealthCheck.IntervalTime ?? undefined })),
    ).sort((a, b) => a.where.localeCompare(b.where));
  const configSpec = async (ns: string, name: string): Promise<Spec> => ((await custom.getNamespacedCustomObject({ ...TSC, namespace: ns, name })) as { spec: Spec }).spec;
  const refusals = async (ns: string): Promise<string[]> =>
    (await core.listNamespacedEvent({ namespace: ns })).items.filter((e) => e.type === 'Warning' && REFUSAL.test(e.message ?? '')).map((e) => `${e.involvedObject.name}: ${e.message ?? ''}`);
  /** Every rule fragment with its healthCheck, keyed as the CLB rule it selects (domain "" = the VIP). */
  const fragments = (spec: Spec, vip: string): Map<string, Record<string, unknown> | undefined> =>
    new Map(spec.loadBalancer.l7Listeners.flatMap((l) => (l.domains ?? []).flatMap((d) => (d.rules ?? []).map((r) => [`${d.domain || vip}${r.url}`, r.healthCheck] as const))));

  async function setUp(ns: string, name: string, spec: Spec, paths: { host?: string; paths: string[] }[], rules: number): Promise<{ before: ClbRule[]; vip: string; specBefore: Spec }> {
    await custom.createNamespacedCustomObject({ ...TSC, namespace: ns, body: { apiVersion: 'cloud.tencent.com/v1alpha1', kind: 'TkeServiceConfig', metadata: { name: `${name}-config` }, spec } });
    const specBefore = await configSpec(ns, `${name}-config`);
    await net.createNamespacedIngress({ namespace: ns, body: lbIngress(name, { annotations: { ...PRIVATE_INGRESS, [NAMED]: `${name}-config` }, rules: paths }) });
    await waitFor(`${rules} rules of ${name} on the CLB`, async () => ((await lbOf(ns, name)).Listeners.flatMap((l) => l.Rules).length === rules ? true : undefined));
    const vip = (await lbOf(ns, name)).LoadBalancerVips?.[0] ?? '';
    return { before: await clbRules(ns, name), vip, specBefore };
  }

  async function enforce(ref: PolicyRef, name: string): Promise<void> {
    expect((await applyPolicy(policyManifest(ref, { mode: 'Enforce', revertOnDelete: true, l7: { keepalive: true, healthCheckSource: 'Range100_64' } }))).stderr).toBe('');
    const ready = await waitForPolicy(
      ref,
      `Ready with ${name} Mitigated`,
      (p) => reportedStatus(p).conditions.some((c) => c.type === 'Ready' && c.status === 'True') && reportedStatus(p).targets.find((t) => t.name === name)?.verdict === 'Mitigated',
      { timeoutMs: 60_000, context: logs },
    );
    figures[`${name}Verdict`] = reportedStatus(ready).targets.map((t) => `${t.name}: ${t.verdict}`);
  }

  it('a hand-made config without health checks: fragments carry the CLB switch, checks stay on with the 100.64 source, the revert gives the config back exactly', async () => {
    const ns = await createNamespace('enable');
    tke.namespaces.add(ns);
    const spec: Spec = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'c.example.com', rules: [{ url: '/', scheduler: 'WRR' }] }] }] } };
    const { before, vip, specBefore } = await setUp(ns, 'blog', spec, [{ host: 'c.example.com', paths: ['/', '/api'] }, { paths: ['/x'] }], 3);
    await tke.simulator.resyncNow();
    // TKE's rule checks as created: on, the VIP source (legacy account).
    expect(before.map((r) => [r.healthSwitch, r.source])).toEqual([[1, 0], [1, 0], [1, 0]]);
    expect(await refusals(ns)).toEqual([]);

    const ref: PolicyRef = { namespace: ns, name: 'p' };
    await enforce(ref, 'blog');
    // The CLB rules: checks on, the 100.64 source.
    const after = await clbRules(ns, 'blog');
    figures.clbAfter = after;
    expect(after.map((r) => [r.where, r.healthSwitch, r.source])).toEqual(before.map((r) => [r.where, 1, 1]));
    // Every rule fragment loopguard added or edited: enable = the CLB rule's switch, the 100.64 source.
    const declared = fragments(await configSpec(ns, 'blog-config'), vip);
    figures.declared = Object.fromEntries(declared);
    expect([...declared.keys()].sort()).toEqual(before.map((r) => r.where));
    for (const r of before) expect(declared.get(r.where)).toEqual({ enable: r.healthSwitch === 1, sourceIpType: 1 });
    // TKE's next sync agrees: nothing refused, nothing switched.
    await tke.simulator.resyncNow();
    expect((await clbRules(ns, 'blog')).map((r) => [r.healthSwitch, r.source])).toEqual([[1, 1], [1, 1], [1, 1]]);
    expect(await refusals(ns)).toEqual([]);

    await deletePolicy(ref, { timeoutMs: 40_000, context: logs });
    expect(await configSpec(ns, 'blog-config')).toEqual(specBefore);
    await tke.simulator.resyncNow();
    expect(await clbRules(ns, 'blog')).toEqual(before);
    expect(await refusals(ns)).toEqual([]);
  }, 180_000);

  it("the user's own healthCheck without enable: completed with the CLB's current switch, which loopguard never changes; the revert removes exactly that", async () => {
    const ns = await createNamespace('enable-broken');
    tke.namespaces.add(ns);
    const spec: Spec = { loadBalancer: { l7Listeners: [{ protocol: 'HTTP', port: 80, domains: [{ domain: 'd.example.com', rules: [{ url: '/', healthCheck: { intervalTime: 7 } }] }] }] } };
    await setUp(ns, 'shop', spec, [{ host: 'd.example.com', paths: ['/'] }], 1);
    const specBefore = await configSpec(ns, 'shop-config');
    // The world as the user's broken fragment left it, before loopguard.
    const before = await waitFor(
      `TKE's reading (${reading}) of the fragment`,
      async () => {
        const [r] = await clbRules(ns, 'shop');
        const refused = (await refusals(ns)).length > 0;
        return r && r.healthSwitch === brokenSwitchBefore && refused === (reading === 'refused') ? r : undefined;
      },
      { timeoutMs: 20_000 },
    );
    figures.brokenBefore = before;
    // loopguard blames a TKE Warning from up to 2 s before its declaration on the declaration (effects.ts,
    // EVENT_SLACK_MS: Event times have second precision): the user's own refusal must be older than that.
    const lastRefusal = async (): Promise<number> =>
      Math.max(0, ...(await core.listNamespacedEvent({ namespace: ns })).items.filter((e) => REFUSAL.test(e.message ?? '')).map((e) => new Date(e.lastTimestamp ?? e.eventTime ?? 0).getTime()));
    await waitFor('the refusal older than 3 s', async () => (Date.now() - (await lastRefusal()) > 3_000 ? true : undefined), { timeoutMs: 20_000 });

    const ref: PolicyRef = { namespace: ns, name: 'p' };
    await enforce(ref, 'shop');
    // The switch as it was; the source switched; the config now valid, so TKE applies the user's interval too.
    const [after] = await clbRules(ns, 'shop');
    expect(after).toMatchObject({ healthSwitch: brokenSwitchBefore, source: 1, interval: 7 });
    const hc = (await configSpec(ns, 'shop-config')).loadBalancer.l7Listeners[0]?.domains?.[0]?.rules?.[0]?.healthCheck;
    figures.completed = hc;
    expect(hc).toEqual({ intervalTime: 7, sourceIpType: 1, enable: brokenSwitchBefore === 1 });

    await deletePolicy(ref, { timeoutMs: 40_000, context: logs });
    expect(await configSpec(ns, 'shop-config')).toEqual(specBefore);
    const [reverted] = await clbRules(ns, 'shop');
    expect(reverted).toMatchObject({ healthSwitch: brokenSwitchBefore, source: 0 });
  }, 180_000);
});
