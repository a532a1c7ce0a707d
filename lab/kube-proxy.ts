// The lab's kube-proxy: what the nodes' kube-proxy (IPVS) does when TKE's model says it binds a CLB's VIP, done in
// the lab's kernels. The TKE simulator decides whether kube-proxy binds a VIP (sim/tke-simulator/kube-proxy.ts:
// IPVS, a build with prevent-loopback, a Service that asks) and tells a VipBinder; passed as the simulator's
// `vips`, this binder tells the emulator's health model (`next`, as the simulator's default does) and, for the CLB
// whose VIP is the lab's, binds or unbinds 10.0.0.100 on the lab nodes' kube-ipvs0 with the local redirect
// (Lab.bindVip: the lab state of `prevent-loopback`, docs/lab.md (b)). It models only that binding: the
// health-check source is the CLB listener's `SourceIpType`, which the lab's checker reads through the emulator
// (lab/health-oracle.ts); what kube-proxy does for other Services is not modelled.
import type { VipBinder } from '../sim/tke-simulator/index.js';
import { nodeName, VIP } from './addresses.js';
import type { Lab } from './lab.js';

export interface LabKubeProxyOptions {
  /** The emulator's model of the binding (the simulator's default binder). */
  next: VipBinder;
  /** The CLB's IPv4 VIPs (the emulator's admin view). */
  vipsOf: (loadBalancerId: string) => Promise<readonly string[]>;
}

export class LabKubeProxy implements VipBinder {
  /** What TKE's model wants on the lab's VIP (bound or not), as last told. */
  private wanted = false;
  /** What the lab's kernels have of it: `wanted` once the change has been made on every node (not withdrawn). */
  private applied = false;
  /** Lab nodes whose kube-proxy no longer binds the VIP (the fix undone behind loopguard's back). */
  private readonly withdrawn = new Set<number>();
  /** One change of the lab's kernels at a time, in the order the simulator asked. */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly lab: Lab,
    private readonly options: LabKubeProxyOptions,
  ) {}

  async setVipBound(loadBalancerId: string, bound: boolean): Promise<void> {
    await this.options.next.setVipBound(loadBalancerId, bound);
    if (!(await this.options.vipsOf(loadBalancerId)).includes(VIP)) return;
    this.wanted = bound;
    await this.apply();
  }

  /**
   * Whether kube-proxy binds the lab's VIP now, by TKE's model, once the lab's kernels have it: the nodes are bound
   * side by side, each with its own `ip` and `nft` commands, and a probe from a node not bound yet loops (a node
   * withdrawn stays unbound: see `withdraw`).
   */
  get bound(): boolean {
    return this.applied;
  }

  /**
   * Undoes the fix on these lab nodes behind everyone's back: their kube-proxy removes the VIP from kube-ipvs0 and
   * does not bind it again, as a kube-proxy that lost prevent-loopback would (a node rolled back to an older build,
   * say). TKE's model, the emulator and loopguard are not told: the Service still asks, the emulator still calls the
   * VIP bound. Returns the nodes' names.
   */
  async withdraw(nodes: readonly number[]): Promise<string[]> {
    for (const i of nodes) this.withdrawn.add(i);
    await this.apply();
    return nodes.map(nodeName);
  }

  private apply(): Promise<void> {
    const run = async () => {
      const wanted = this.wanted;
      const all = this.lab.allNodes();
      const binding = wanted ? all.filter((i) => !this.withdrawn.has(i)) : [];
      const unbound = all.filter((i) => !binding.includes(i));
      if (binding.length > 0) await this.lab.bindVip(true, binding);
      if (unbound.length > 0) await this.lab.bindVip(false, unbound);
      this.applied = wanted;
    };
    this.chain = this.chain.then(run, run);
    return this.chain;
  }
}
