// One running lab: the namespaces, the agents in them, and the knobs the scenarios turn (VIP binding, the CLB's
// L4 backend and L7 mode, a node's sysctls). Always stopped: by its owner, by the exit handler, or on a signal.
import { readFile } from 'node:fs/promises';
import { CLB_SNAT_SOURCE, HTTP_NODEPORT, L7_PORT, TCP_NODEPORT, VIP, nodeIp, nodeName, podIp, podShadow, probeBindAddress, shadowIp, type ClientKind, type ProbeSource } from './addresses.js';
import { AgentBundle } from './agent-bundle.js';
import { Agent } from './agent-client.js';
import type { Outcome, ProbeWindowRequest } from './agent-protocol.js';
import type { ProbeReport } from '../src/api/probe.js';
import { NFT_TABLE, newPrefix } from './names.js';
import { clbRuleset, kubeProxyRuleset, nodeObservationRuleset, parseCounters, type L4Backend } from './nft.js';
import { ipNs, nftJson, nftNs, sysctlNs } from './shell.js';
import { allNamespaces, buildTopology, removeNamespaces, removeNamespacesSync, setVipBound, topologyNames, type Topology } from './topology.js';

export interface LabOptions {
  nodes: number;
  /** The L7 CLB's per-real-server timeout before it tries the next (TKE-CN/TKE-LOOPBACK in tencent-cloud.md §7: about 4 s). */
  l7TimeoutMs: number;
  log: (line: string) => void;
}

export type L7Mode = 'passthrough' | 'snat';

/** What one lab holds: its agents, their bundle and its namespaces. Released exactly once, however the run ends. */
class Resources {
  readonly agents: Agent[] = [];
  readonly namespaces: string[];
  readonly bundle: AgentBundle;
  private releasing: Promise<void> | undefined;
  constructor(topology: Topology) {
    this.namespaces = allNamespaces(topology);
    this.bundle = new AgentBundle(topology.prefix);
  }

  async startAgent(ns: string): Promise<Agent> {
    const agent = await Agent.start(ns, await this.bundle.file());
    this.agents.push(agent);
    return agent;
  }

  /** Every caller (owner, signal handler, error path) waits for the same removal. */
  release(): Promise<void> {
    this.releasing ??= (async () => {
      await Promise.all(this.agents.map((a) => a.stop()));
      await removeNamespaces(this.namespaces);
      await this.bundle.remove();
      live.delete(this);
    })();
    return this.releasing;
  }

  releaseSync(): void {
    live.delete(this);
    for (const a of this.agents) a.kill();
    removeNamespacesSync(this.namespaces);
    this.bundle.removeSync();
  }
}

const live = new Set<Resources>();
let exitHookInstalled = false;

/** Last resort when the process exits without stopping its labs (an uncaught error): synchronous removal. */
function track(r: Resources): void {
  live.add(r);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const res of live) res.releaseSync();
  });
}

/** Stops every lab of this process (signal handlers call this before exiting). */
export async function stopAllLabs(): Promise<void> {
  await Promise.all([...live].map((r) => r.release()));
}

export class Lab {
  l4Backend: L4Backend = 'random';
  l7Mode: L7Mode = 'passthrough';
  private probers: Promise<Agent[]> | undefined;

  private constructor(
    readonly topology: Topology,
    readonly options: LabOptions,
    private readonly agents: { clb: Agent; hc: Agent; pod: Agent; nodes: Agent[] },
    private readonly resources: Resources,
  ) {}

  static async start(options: Partial<LabOptions> = {}): Promise<Lab> {
    const o: LabOptions = { nodes: 3, l7TimeoutMs: 4000, log: () => undefined, ...options };
    const topology = topologyNames(newPrefix(), o.nodes);
    // Tracked before anything exists, so a failure half-way is cleaned up like a finished run.
    const resources = new Resources(topology);
    track(resources);
    try {
      const t0 = Date.now();
      // esbuild bundles the agent while the kernel builds the namespaces; both settle before a failure of either is
      // thrown, so the release that follows finds every namespace the build made.
      const built = await Promise.allSettled([resources.bundle.file(), buildTopology(topology)]);
      for (const r of built) if (r.status === 'rejected') throw r.reason;
      await nftNs(topology.clb, clbRuleset(o.nodes, 'random'));
      await Promise.all(topology.nodes.map((ns, i) => nftNs(ns, nodeObservationRuleset(i) + kubeProxyRuleset(false))));
      const [clb, hc, pod, ...nodes] = await Promise.all(
        [topology.clb, topology.hc, topology.pod, ...topology.nodes].map((ns) => resources.startAgent(ns)),
      );
      const lab = new Lab(topology, o, { clb: clb!, hc: hc!, pod: pod!, nodes }, resources);
      await Promise.all(nodes.map((a, i) => a.serve(nodeName(i), TCP_NODEPORT, HTTP_NODEPORT)));
      await lab.setL7Mode('passthrough');
      o.log(`lab ${topology.prefix}* up in ${Date.now() - t0} ms: ${o.nodes} nodes, a client pod on node1, clb, hc`);
      return lab;
    } catch (err) {
      await resources.release();
      throw err;
    }
  }

  get nodeCount(): number {
    return this.options.nodes;
  }

  /** kube-proxy IPVS binds the VIP (prevent-loopback), or not: the address on kube-ipvs0 and the local redirect. */
  async bindVip(bound: boolean, nodes: number[] = this.allNodes()): Promise<void> {
    await Promise.all(
      nodes.map(async (i) => {
        const ns = this.topology.nodes[i] ?? '';
        await setVipBound(ns, bound);
        await nftNs(ns, kubeProxyRuleset(bound));
      }),
    );
  }

  async setL4Backend(backend: L4Backend): Promise<void> {
    await nftNs(this.topology.clb, clbRuleset(this.nodeCount, backend));
    this.l4Backend = backend;
  }

  async setL7Mode(mode: L7Mode): Promise<void> {
    await this.agents.clb.proxy({
      listenHost: VIP,
      listenPort: L7_PORT,
      nodes: this.allNodes().map(nodeIp),
      nodePort: HTTP_NODEPORT,
      attemptTimeoutMs: this.options.l7TimeoutMs,
      mode,
      shadows: Object.fromEntries(this.allNodes().flatMap((i) => [[nodeIp(i), shadowIp(i)], [podIp(i), podShadow(i)]])),
      snatSource: CLB_SNAT_SOURCE,
    });
    this.l7Mode = mode;
  }

  /** Sets sysctls in node i (e.g. `net.ipv4.conf.eth0.accept_local`). */
  async sysctl(i: number, settings: Record<string, string | number>): Promise<void> {
    await sysctlNs(this.topology.nodes[i] ?? '', settings);
  }

  /** Runs `ip …` in node i (e.g. to remove the VIP's local route, as in IMROC-CASE). */
  ip(i: number, args: string[]): Promise<string> {
    return ipNs(this.topology.nodes[i] ?? '', args);
  }

  /** One TCP health check of node i's NodePort from the checker, with the configured source. */
  async probe(i: number, source: ProbeSource, timeoutMs = 1000): Promise<Outcome> {
    const [o] = await this.agents.hc.connect({ host: nodeIp(i), port: TCP_NODEPORT, localAddress: probeBindAddress(source), timeoutMs });
    return o!;
  }

  private client(kind: ClientKind): Agent {
    return kind === 'pod' ? this.agents.pod : this.agents.nodes[0]!;
  }

  /** The client on node1 connects to VIP:port through the L4 CLB `count` times; each reads the answering node. */
  l4Connections(count: number, concurrency: number, timeoutMs: number, port: number, client: ClientKind = 'pod'): Promise<Outcome[]> {
    return this.client(client).connect({ host: VIP, port, timeoutMs, count, concurrency, read: true });
  }

  /** The client on node1 sends `count` HTTP requests to the L7 CLB (VIP:80). */
  l7Requests(count: number, concurrency: number, timeoutMs: number, client: ClientKind = 'pod'): Promise<Outcome[]> {
    return this.client(client).http({ host: VIP, port: L7_PORT, timeoutMs, count, concurrency });
  }

  /**
   * One window of loopguard's probe agent from every node's pod at once, each reporting for its node as the
   * DaemonSet's pod would; one LoopbackProbeReport per node. The agents in the other nodes' pods start on first use
   * (a run without `--probe` never starts them).
   */
  async probeWindow(window: Omit<ProbeWindowRequest, 'node' | 'pod'>): Promise<ProbeReport[]> {
    this.probers ??= Promise.all(this.topology.pods.map((ns, i) => (i === 0 ? this.agents.pod : this.resources.startAgent(ns))));
    const agents = await this.probers;
    return Promise.all(agents.map((a, i) => a.probeWindow({ ...window, node: nodeName(i), pod: `loopguard-probe-${nodeName(i)}` })));
  }

  /** Node i's observation counters (lab/nft.ts): where packets of each source class got to. */
  async counters(i: number): Promise<Record<string, number>> {
    return parseCounters(await nftJson(this.topology.nodes[i] ?? '', ['list', 'counters', 'table', 'ip', `${NFT_TABLE}_obs`]));
  }

  allNodes(): number[] {
    return Array.from({ length: this.nodeCount }, (_, i) => i);
  }

  stop(): Promise<void> {
    return this.resources.release();
  }
}

/** The kernel's count of martian-source drops (in_martian_src of /proc/net/stat/rt_cache, summed over CPUs). */
export async function martianSourceDrops(): Promise<number> {
  const text = await readFile('/proc/net/stat/rt_cache', 'utf8');
  const [header, ...rows] = text.trim().split('\n');
  const col = (header ?? '').trim().split(/\s+/).indexOf('in_martian_src');
  return rows.reduce((sum, r) => sum + parseInt(r.trim().split(/\s+/)[col] ?? '0', 16), 0);
}
