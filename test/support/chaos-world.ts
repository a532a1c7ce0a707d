// The chaos suite's world (issue 13 #4): a private control plane (the suite restarts its apiserver and compacts its
// etcd), the local TKE with faults injected into a share of the CLB calls, N at-risk LoadBalancer Services with
// their CLBs' health checks as TKE made them (the originals every revert must give back), and a seeded RNG so a
// failing run can be replayed with CHAOS_SEED. Used by test/integration/chaos.test.ts and bench/chaos.ts.
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { mulberry32, type FaultPlan, type FaultRule, type HealthCheckState } from '../../sim/clb-emulator/index.js';
import { createAtRiskServices } from '../../bench/support.js';
import { ensureControlPlaneBinaries } from '../controlplane/binaries.js';
import { installCrds } from '../controlplane/crds.js';
import { startControlPlane, stopControlPlane, type ControlPlaneState } from '../controlplane/launcher.js';
import { createNamespace, kubeConfig } from './kube.js';
import { startLocalTke, type LocalTke } from './local-tke.js';
import type { PolicyRef } from './policy.js';

export interface ChaosProfile {
  name: 'short' | 'long';
  /** At-risk Services, 2 listeners each. */
  targets: number;
  /** Enforce → kill → converge → revert → kill → converge, each cycle one kill point in each phase. */
  cycles: number;
  /** Share of CLB calls that fail (error, 5xx, reset; for writes also a failed task). */
  faultRate: number;
}

/** `npm test` runs `short` (about 2 minutes); `npm run bench:chaos` runs `long` (the 20 kill points). */
export const CHAOS_PROFILES: Readonly<Record<ChaosProfile['name'], ChaosProfile>> = {
  short: { name: 'short', targets: 10, cycles: 2, faultRate: 0.2 },
  long: { name: 'long', targets: 50, cycles: 20, faultRate: 0.2 },
};

/** CHAOS_SEED when set (to replay a run), else a fresh one; either way it is printed with every result. */
export function chaosSeed(raw = process.env.CHAOS_SEED): number {
  if (raw !== undefined && raw !== '') {
    const seed = Number(raw);
    if (!Number.isInteger(seed)) throw new Error(`CHAOS_SEED must be an integer, got ${raw}`);
    return seed;
  }
  return 1 + Math.floor(Math.random() * 2 ** 31);
}

export class ChaosRng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
}

const READS = ['DescribeLoadBalancers', 'DescribeListeners', 'DescribeTargetHealth', 'DescribeTaskStatus'];
const WRITES = ['ModifyListener', 'ModifyRule', 'ModifyLoadBalancerAttributes'];

/**
 * Each call of these actions fails with probability `rate`, spread evenly over the fault kinds: reads get an
 * InternalError, a 503 or a reset connection; writes also ResourceInOperating instead of InternalError and a task
 * that fails. The emulator draws rule by rule and the first terminal fault wins, so each later rule's rate is
 * conditional on the earlier ones not firing: kind i of k fires with (rate/k) / (1 − (i−1)·rate/k).
 */
export function chaosFaultPlan(seed: number, rate: number): FaultPlan {
  const spread = (action: string, kinds: Omit<FaultRule, 'action' | 'rate'>[]): FaultRule[] =>
    kinds.map((kind, i) => ({ action, ...kind, rate: rate / kinds.length / (1 - (i * rate) / kinds.length) }));
  return {
    seed,
    rules: [
      ...READS.flatMap((a) => spread(a, [{ kind: 'error', code: 'InternalError' }, { kind: 'http5xx', status: 503 }, { kind: 'reset' }])),
      ...WRITES.flatMap((a) =>
        spread(a, [{ kind: 'error', code: 'FailedOperation.ResourceInOperating', message: 'The CLB is busy (injected fault).' }, { kind: 'http5xx', status: 503 }, { kind: 'reset' }, { kind: 'taskFailure' }]),
      ),
    ],
  };
}

export interface ChaosWorld {
  cp: ControlPlaneState;
  kc: KubeConfig;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  tke: LocalTke;
  ns: string;
  services: string[];
  /** Service name → its CLB. */
  lbOf: Record<string, string>;
  /** `lb/listener` → the health check TKE made (what a revert must restore exactly). */
  originals: Record<string, HealthCheckState>;
  policy: PolicyRef;
  stop(): Promise<void>;
}

/** The second replica's caller: each replica writes under its own credentials, so the write log tells them apart. */
export const REPLICA_CALLERS = ['loopguard', 'loopguard-b'] as const;

export async function startChaosWorld(profile: ChaosProfile, log: (line: string) => void): Promise<ChaosWorld> {
  const cp = await startControlPlane({ binaries: await ensureControlPlaneBinaries() });
  let tke: LocalTke | undefined;
  try {
    await installCrds(cp.kubeconfig);
    const kc = kubeConfig(cp.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    tke = await startLocalTke({ kubeconfig: cp.kubeconfig, allNamespaces: true, operator: false, moreCallers: [REPLICA_CALLERS[1]] });
    const ns = await createNamespace('chaos', kc);
    const t0 = Date.now();
    const ids = await createAtRiskServices(core, tke.emulator, ns, profile.targets, log);
    const services = (await core.listNamespacedService({ namespace: ns })).items.map((s) => s.metadata?.name ?? '').sort();
    const lbOf: Record<string, string> = {};
    for (const s of (await core.listNamespacedService({ namespace: ns })).items) {
      lbOf[s.metadata?.name ?? ''] = s.metadata?.annotations?.['service.kubernetes.io/loadbalance-id'] ?? '';
    }
    const originals: Record<string, HealthCheckState> = {};
    for (const lb of (await tke.emulator.admin.state()).loadBalancers) {
      if (!ids.includes(lb.LoadBalancerId)) continue;
      for (const l of lb.Listeners) if (l.HealthCheck) originals[`${lb.LoadBalancerId}/${l.ListenerId}`] = l.HealthCheck;
    }
    log(`${services.length} at-risk Services, ${Object.keys(originals).length} listeners, CLBs ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const world: ChaosWorld = {
      cp,
      kc,
      core,
      custom: kc.makeApiClient(CustomObjectsApi),
      tke,
      ns,
      services,
      lbOf,
      originals,
      policy: { namespace: ns, name: 'chaos', kubeconfig: cp.kubeconfig },
      stop: async () => {
        await tke?.stop();
        await stopControlPlane(cp);
      },
    };
    return world;
  } catch (err) {
    await tke?.stop().catch(() => undefined);
    await stopControlPlane(cp);
    throw err;
  }
}
