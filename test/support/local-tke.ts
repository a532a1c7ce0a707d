// The local TKE for end-to-end suites: the CLB emulator (through the real SDK), the TKE simulator on the
// test apiserver, a kube-proxy profile, and optionally the operator as its own process under the config/
// ServiceAccount. Suites add the namespaces they create to `namespaces`; the simulator touches only those.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { startClbEmulator, type CallerCredentials, type ClbEmulator, type EmulatorOptions } from '../../sim/clb-emulator/index.js';
import { applyClusterProfile, startTkeSimulator, type ClusterProfileName, type TkeSimulator, type TkeSimulatorOptions, type VipBinder } from '../../sim/tke-simulator/index.js';
import { kubeConfig, waitFor } from './kube.js';
import { AT_RISK_L4, lbService } from './workload.js';
import { operatorAccountKubeconfig, startOperatorProcess, type OperatorProcess, type OperatorProcessOptions } from './operator.js';

/**
 * The operator and TKE's controllers get their own credentials, so the emulator's stats tell their calls apart
 * (`byCaller.loopguard` / `byCaller.tke`); both still share the one account's quota. loopguard comes first, so
 * `emulator.credentials` stays the pair the operator runs with. Fresh keys per run: nothing to leak or reuse.
 */
export function localTkeCallers(more: readonly string[] = []): CallerCredentials[] {
  return ['loopguard', 'tke', ...more].map((caller) => ({
    caller,
    secretId: `AKID${caller}${randomBytes(8).toString('hex')}`,
    secretKey: randomBytes(24).toString('hex'),
  }));
}

export interface LocalTkeOptions {
  /** Admin kubeconfig of the cluster; default the shared test control plane. */
  kubeconfig?: string;
  profile?: ClusterProfileName;
  emulator?: Partial<EmulatorOptions>;
  /** TKE's periodic TkeServiceConfig resync; 0 = only on demand (`simulator.resyncNow()`). */
  resyncIntervalMs?: number;
  /** Only namespaces in `namespaces` (default), or every namespace (a private control plane). */
  allNamespaces?: boolean;
  /** TKE's behaviour beyond the documented defaults, e.g. a controller that does not switch on prevent-loopback. */
  simulator?: Pick<TkeSimulatorOptions, 'switchHealthCheckSourceOnPreventLoopback' | 'syncScope' | 'missingHealthCheckEnable'>;
  /** Where kube-proxy's binding of a VIP goes (default: the emulator's health model), e.g. also a lab's kernels (lab/kube-proxy.ts). */
  vips?: (emulator: ClbEmulator) => VipBinder;
  /** Start the operator too (default), with these extra options; false = not. */
  operator?: Omit<OperatorProcessOptions, 'emulator' | 'kubeconfig'> | false;
  /** More callers with credentials of their own (e.g. one per operator replica, so the emulator tells them apart). */
  moreCallers?: string[];
}

/** Operator options, plus the emulator caller whose credentials it runs with (default `loopguard`). */
export type LocalOperatorOptions = Omit<OperatorProcessOptions, 'emulator' | 'kubeconfig'> & { caller?: string };

export interface LocalTke {
  kc: KubeConfig;
  emulator: ClbEmulator;
  simulator: TkeSimulator;
  namespaces: Set<string>;
  /** The ServiceAccount kubeconfig the operator runs with. */
  operatorKubeconfig: string;
  operator: OperatorProcess | undefined;
  /** Starts (another) operator process with the ServiceAccount's kubeconfig. */
  startOperator(options?: LocalOperatorOptions): Promise<OperatorProcess>;
  stop(): Promise<void>;
}

export async function startLocalTke(options: LocalTkeOptions = {}): Promise<LocalTke> {
  const kc = kubeConfig(options.kubeconfig);
  const namespaces = new Set<string>();
  // A suite's own `accounts` stay the first (operator) pair, as before.
  const callers = options.emulator?.accounts ? [] : localTkeCallers(options.moreCallers);
  const emulator = await startClbEmulator({ taskDurationMs: 50, callers, ...options.emulator });
  await applyClusterProfile(kc, options.profile ?? 'ipvs-new');
  const simulator = await startTkeSimulator({
    kubeConfig: kc,
    // A suite that brings its own accounts without a `tke` caller gets the old shared credentials.
    clb: { endpoint: emulator.endpoint, region: emulator.region, credentials: emulator.callers['tke'] ?? emulator.credentials, protocol: 'http://' },
    ...(options.allNamespaces ? {} : { namespaceFilter: (n: string) => namespaces.has(n) }),
    resyncIntervalMs: options.resyncIntervalMs ?? 0,
    ...(options.vips ? { vips: options.vips(emulator) } : {}),
    ...options.simulator,
  });
  const operatorKubeconfig = await operatorAccountKubeconfig(options.kubeconfig);
  const started: OperatorProcess[] = [];
  const startOperator = async ({ caller, ...extra }: LocalOperatorOptions = {}) => {
    const credentials = caller === undefined ? emulator.credentials : emulator.callers[caller];
    if (!credentials) throw new Error(`the emulator has no caller ${caller ?? ''} (LocalTkeOptions.moreCallers)`);
    const op = await startOperatorProcess({ ...extra, kubeconfig: operatorKubeconfig, emulator: { ...emulator, credentials } });
    started.push(op);
    return op;
  };
  const operator = options.operator === false ? undefined : await startOperator(options.operator ?? {});
  return {
    kc,
    emulator,
    simulator,
    namespaces,
    operatorKubeconfig,
    operator,
    startOperator,
    stop: async () => {
      for (const op of started) await op.stop();
      await simulator.stop();
      await emulator.close();
    },
  };
}

/**
 * Creates an at-risk L4 Service (AT_RISK_L4: a TCP and a UDP port) per name in `namespace` and waits until TKE has
 * given each its CLB with both listeners. Returns the CLB ids, in the names' order.
 */
export async function atRiskServicesWithClbs(tke: Pick<LocalTke, 'emulator'>, namespace: string, names: readonly string[], timeoutMs?: number): Promise<string[]> {
  const core = kubeConfig().makeApiClient(CoreV1Api);
  for (const n of names) await core.createNamespacedService({ namespace, body: lbService(n, AT_RISK_L4) });
  return waitFor(
    'CLBs assigned',
    async () => {
      const out: string[] = [];
      for (const n of names) {
        const id = (await core.readNamespacedService({ namespace, name: n })).metadata?.annotations?.['service.kubernetes.io/loadbalance-id'];
        if (!id || (await tke.emulator.admin.getLoadBalancer(id)).Listeners.length < 2) return undefined;
        out.push(id);
      }
      return out;
    },
    timeoutMs !== undefined ? { timeoutMs } : {},
  );
}
