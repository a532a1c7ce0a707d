// The data-plane lab (lab/, docs/lab.md) in real kernels: the faults it measures come from the kernel's own
// decisions, not from the lab's code (one kernel setting flipped at a time moves or removes the drop exactly as the
// kernel path predicts, IMROC-CASE in tencent-cloud.md §7), and `npm run lab` leaves no namespace, veth or nft table behind, also when it is
// stopped with SIGTERM; with `--probe`, loopguard's probe agent measures the faults before the fixes and none after
// (issue 41 #5). Needs root and network namespaces: CI has both, and without them these tests fail (the lab
// says what is missing) rather than skip.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VIP } from '../../lab/addresses.js';
import { Lab, martianSourceDrops } from '../../lab/lab.js';
import { LAB_PREFIX } from '../../lab/names.js';
import { L4_TARGET, L7_TARGET } from '../../lab/probe.js';
import type { LabResults } from '../../lab/scenarios.js';
import { waitFor } from '../support/kube.js';
import { holdForSuite } from '../support/exclusive.js';

// The lab's namespaces, links and nft tables are the machine's: one lab suite at a time (exclusive.ts).
holdForSuite('lab');

const sh = (cmd: string, args: string[]) =>
  new Promise<string>((resolve, reject) => execFile(cmd, args, { encoding: 'utf8' }, (err, out, stderr) => (err ? reject(new Error(`${cmd} ${args.join(' ')}: ${stderr}`)) : resolve(out))));

/**
 * What a lab run of process `pid` may have left: namespaces, links and nft tables (the caller's namespace too), and
 * the agent's bundle in the temp dir (lab/agent-bundle.ts).
 */
async function leftovers(pid: number): Promise<string[]> {
  const prefix = `${LAB_PREFIX}${pid}-`;
  const namespaces = (await sh('ip', ['netns', 'list'])).split('\n').filter((l) => l.startsWith(prefix));
  const links = (await sh('ip', ['-o', 'link', 'show'])).split('\n').filter((l) => l.includes(LAB_PREFIX));
  const tables = (await sh('nft', ['list', 'tables'])).split('\n').filter((l) => l.includes('lg_lab'));
  const bundles = (await readdir(tmpdir())).filter((f) => f.startsWith(prefix)).map((f) => join(tmpdir(), f));
  return [...namespaces, ...links, ...tables, ...bundles];
}

/** `npm run lab` as one process (node + tsx), so its pid is the one in its namespaces' names. */
function runLab(args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'lab/main.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d.toString()));
  child.stderr.on('data', (d) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  return { child, exited, output: () => output };
}

describe('the data-plane lab: faults from the kernel', () => {
  let lab: Lab;
  // A fresh lab per test: each one turns kernel settings that must not leak into the next.
  beforeEach(async () => {
    lab = await Lab.start({ nodes: 2 });
  });
  afterEach(async () => {
    await lab?.stop();
  });

  async function probeVip(): Promise<{ ok: boolean; d: Record<string, number>; martian: number }> {
    const before = await lab.counters(0);
    const m0 = await martianSourceDrops();
    const o = await lab.probe(0, 'vip', 1000);
    const after = await lab.counters(0);
    const d = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
    return { ok: o.ok, d, martian: (await martianSourceDrops()) - m0 };
  }

  it('a health check from the VIP dies in the martian-source check; accept_local moves the drop to the reply route; both removed, it passes (IMROC-CASE)', async () => {
    // Before the VIP is bound, the VIP-sourced check passes: the lab does not drop it by itself.
    expect((await probeVip()).ok).toBe(true);

    await lab.bindVip(true, [0]);
    const bound = await probeVip();
    expect(bound.ok).toBe(false);
    // Seen on eth0 (PREROUTING), never delivered (INPUT): dropped by the routing decision in between, which counts
    // it as a martian source (fib_validate_source: the source is a local address).
    expect(bound.d.seen_vip).toBeGreaterThan(0);
    expect(bound.d.delivered_vip).toBe(0);
    expect(bound.martian).toBeGreaterThanOrEqual(bound.d.seen_vip ?? 1);
    // The same node, the same moment: the check from 100.64 passes.
    expect((await lab.probe(0, 'range', 1000)).ok).toBe(true);

    // accept_local=1: the kernel accepts a local source on eth0, the SYN reaches the NodePort, and the check still
    // fails — the SYN-ACK to the VIP is routed to the node itself (the VIP is local), never out of eth0.
    await lab.sysctl(0, { 'net.ipv4.conf.eth0.accept_local': 1 });
    const accepted = await probeVip();
    expect(accepted.ok).toBe(false);
    expect(accepted.d.delivered_vip).toBeGreaterThan(0);
    expect(accepted.d.reply_inside_vip).toBeGreaterThan(0);
    expect(accepted.d.reply_out_vip).toBe(0);

    // IMROC-CASE's experiment: with the VIP's `local` route removed as well, the reply leaves and the check passes.
    await lab.ip(0, ['route', 'del', 'local', VIP, 'dev', 'kube-ipvs0', 'table', 'local']);
    const fixed = await probeVip();
    expect(fixed.ok).toBe(true);
    expect(fixed.d.reply_out_vip).toBeGreaterThan(0);

    // accept_local back to 0, the route still gone: with rp_filter 0 the kernel checks the source against the
    // node's addresses (the VIP is still on kube-ipvs0), so the check dies as a martian again; rp_filter=2 makes it
    // consult the routes instead, which no longer say "local" — the check passes without accept_local.
    await lab.sysctl(0, { 'net.ipv4.conf.eth0.accept_local': 0 });
    const addressCheck = await probeVip();
    expect(addressCheck.ok).toBe(false);
    expect(addressCheck.d.delivered_vip).toBe(0);
    await lab.sysctl(0, { 'net.ipv4.conf.all.rp_filter': 2 });
    const routeCheck = await probeVip();
    expect(routeCheck.ok).toBe(true);
    expect(routeCheck.d.delivered_vip).toBeGreaterThan(0);
  });

  it('the L4 loop from the pod: node1 accepts the SYN and answers the pod directly, not through the CLB; another node answers through it', async () => {
    await lab.setL4Backend(0);
    const before = await lab.counters(0);
    const [looped] = await lab.l4Connections(1, 1, 1000, 81, 'pod');
    const after = await lab.counters(0);
    expect(looped?.ok).toBe(false);
    expect((after.delivered_pod ?? 0) - (before.delivered_pod ?? 0)).toBeGreaterThan(0);
    expect((after.reply_inside_pod ?? 0) - (before.reply_inside_pod ?? 0)).toBeGreaterThan(0);
    expect((after.reply_out_pod ?? 0) - (before.reply_out_pod ?? 0)).toBe(0);
    await lab.setL4Backend(1);
    const [other] = await lab.l4Connections(1, 1, 1000, 81, 'pod');
    expect(other).toMatchObject({ ok: true, answer: 'node2' });
  });

  it("a host-network client: node1's own IP arrives on eth0 and is dropped as a martian; accept_local delivers it, and the reply still stays inside node1", async () => {
    await lab.setL4Backend(0);
    const before = await lab.counters(0);
    const [dropped] = await lab.l4Connections(1, 1, 1000, 81, 'node');
    const mid = await lab.counters(0);
    expect(dropped?.ok).toBe(false);
    expect((mid.seen_own ?? 0) - (before.seen_own ?? 0)).toBeGreaterThan(0);
    expect((mid.delivered_own ?? 0) - (before.delivered_own ?? 0)).toBe(0);
    await lab.sysctl(0, { 'net.ipv4.conf.eth0.accept_local': 1 });
    const [still] = await lab.l4Connections(1, 1, 1000, 81, 'node');
    const after = await lab.counters(0);
    expect(still?.ok).toBe(false);
    expect((after.delivered_own ?? 0) - (mid.delivered_own ?? 0)).toBeGreaterThan(0);
    // The SYN-ACK goes to node1's own address straight back inside node1, not to the CLB that would un-NAT it.
    expect((after.reply_inside_own ?? 0) - (mid.reply_inside_own ?? 0)).toBeGreaterThan(0);
    expect((after.reply_out_own ?? 0) - (mid.reply_out_own ?? 0)).toBe(0);
  });

  // What a signal mid-run does: the lab is being removed (each agent's stdin closed) while the run still sends a
  // request. The request fails; the write to the closed stdin must not end the process (`npm run lab` would exit 1,
  // not with the signal's status).
  it('a request sent while the lab is being removed fails, and nothing else does', async () => {
    const removing = lab.stop();
    await expect(lab.probe(0, 'vip')).rejects.toThrow(/agent in .* exited/);
    await removing;
  });
});

describe('npm run lab', () => {
  let out: string;
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'lg-lab-out-'));
  });
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('prints the three measurements and the probe agent\'s line, shows the faults and their fixes, writes the chart, and leaves nothing behind', async () => {
    const run = runLab(['--profile', 'short', '--probe', '--out', out]);
    const code = await run.exited;
    expect({ code, output: code === 0 ? '' : run.output() }).toEqual({ code: 0, output: '' });
    const text = run.output();
    for (const heading of ['(a) CLB health checks', '(b) L4 CLB', '(c) L7 CLB']) expect(text).toContain(heading);
    expect(await leftovers(run.child.pid ?? -1)).toEqual([]);

    const r = JSON.parse(await readFile(join(out, 'results.json'), 'utf8')) as LabResults;
    const health = Object.fromEntries(r.health.map((h) => [`${h.source}/${h.vipBound ? 'bound' : 'unbound'}`, h.alive / h.probes]));
    expect(health).toEqual({ 'vip/unbound': 1, 'vip/bound': 0, 'range/bound': 1 });
    const l4 = r.l4.map((row) => row.summary.ok / row.summary.total);
    expect(l4[0]).toBe(0); // CLB → the client's own node
    expect(l4.slice(1, r.nodes)).toEqual(Array(r.nodes - 1).fill(1)); // → every other node
    expect(l4[r.nodes]).toBeLessThan(1); // random choice, VIP not bound
    expect(l4[r.nodes + 1]).toBe(1); // the mitigation
    const [pass, snat] = r.l7;
    expect(pass?.summary.ok).toBe(pass?.summary.total);
    expect(pass?.summary.p99).toBeGreaterThanOrEqual(r.l7TimeoutMs); // the ~4 s tail
    expect(snat?.summary.p99).toBeLessThan(r.l7TimeoutMs); // no tail
    expect(snat?.summary.retried).toBe(0);
    const png = await readFile(join(out, 'latency.png'));
    expect(png.subarray(1, 4).toString()).toBe('PNG');

    // loopguard's probe agent (src/probe, run in the pod network) measures the same faults before the fixes, and
    // none after: one line, its figures the agent's own reports'.
    const lines = text.split('\n').filter((l) => l.startsWith('probe:'));
    expect(lines).toHaveLength(1);
    const m = /^probe: L4 before failed=(\d+)\/(\d+) after failed=(\d+)\/(\d+); L7 before stalls=(\d+)\/(\d+) p99=([\d.]+)s after stalls=(\d+)\/(\d+) p99=([\d.]+)ms$/.exec(lines[0] ?? '');
    expect(m).not.toBeNull();
    const [l4Failed, l4Before, l4AfterFailed, l4After, l7Stalls, l7Before, l7P99s, l7AfterStalls, l7After, l7AfterP99ms] = (m ?? []).slice(1).map(Number) as number[];
    expect(l4Failed).toBeGreaterThan(0);
    expect(l4Failed).toBeLessThan(l4Before!); // the loop takes the connections that land on the pod's own node, not all
    expect(l4AfterFailed).toBe(0);
    expect(l4After).toBeGreaterThan(0);
    expect(l7Stalls).toBeGreaterThan(0);
    expect(l7Stalls).toBeLessThan(l7Before!);
    expect(l7P99s).toBeGreaterThanOrEqual(r.l7TimeoutMs / 1000); // the ~4 s tail, as the agent's buckets see it
    expect(l7AfterStalls).toBe(0);
    expect(l7After).toBeGreaterThan(0);
    expect(l7AfterP99ms).toBeLessThan(3000);
    // results.json holds each window's LoopbackProbeReports as the agent built them, and they add up to the line.
    const probe = r.probe!;
    expect(probe.line).toBe(lines[0]);
    expect(probe.phases.map((p) => p.phase)).toEqual(['before', 'after-l4', 'after-l7']);
    const nodes = Array.from({ length: r.nodes }, (_, i) => `node${i + 1}`);
    for (const p of probe.phases) {
      expect(p.reports.map((rep) => rep.spec.node)).toEqual(nodes); // one report per node: the agent ran in every node's pod
      for (const rep of p.reports) {
        expect(rep).toMatchObject({ apiVersion: 'loopguard.dev/v1alpha1', kind: 'LoopbackProbeReport', metadata: { name: rep.spec.node, namespace: 'loopguard-system' }, spec: { planVersion: p.planVersion } });
        for (const t of rep.spec.targets) expect({ id: t.id, notRun: t.notRun }).toEqual({ id: t.id, notRun: 0 });
      }
    }
    // Every node's pod loops when the CLB picks its own node, and the agent names each node that saw it.
    expect([probe.figures.l4.before.nodes, probe.figures.l7.before.nodes, probe.figures.l4.after.nodes, probe.figures.l7.after.nodes]).toEqual([nodes, nodes, [], []]);
    const sum = (phase: string, id: string, key: 'probes' | 'failures' | 'stalls') =>
      probe.phases.find((p) => p.phase === phase)!.reports.reduce((n, rep) => n + (rep.spec.targets.find((t) => t.id === id)?.[key] ?? 0), 0);
    expect([sum('before', L4_TARGET, 'failures'), sum('before', L4_TARGET, 'probes'), sum('after-l4', L4_TARGET, 'failures'), sum('after-l4', L4_TARGET, 'probes')]).toEqual([l4Failed, l4Before, 0, l4After]);
    expect([sum('before', L7_TARGET, 'stalls'), sum('before', L7_TARGET, 'probes'), sum('after-l7', L7_TARGET, 'stalls'), sum('after-l7', L7_TARGET, 'probes')]).toEqual([l7Stalls, l7Before, 0, l7After]);
  }, 120_000);

  it('removes everything when stopped with SIGTERM mid-run', async () => {
    const run = runLab(['--profile', 'full', '--out', out]);
    await waitFor('the lab measuring', () => (run.output().includes('(a) health checks') ? true : undefined), { timeoutMs: 60_000 });
    const pid = run.child.pid ?? -1;
    expect((await sh('ip', ['netns', 'list'])).includes(`${LAB_PREFIX}${pid}-`)).toBe(true);
    expect((await readdir(tmpdir())).some((f) => f.startsWith(`${LAB_PREFIX}${pid}-`))).toBe(true); // the agent's bundle
    run.child.kill('SIGTERM');
    const code = await run.exited;
    expect({ code, output: code === 143 ? '' : run.output() }).toEqual({ code: 143, output: '' });
    expect(await leftovers(pid)).toEqual([]);
  });

  it("removes everything, the probe agents in every node's pod too, when stopped with SIGTERM mid-window", async () => {
    const run = runLab(['--profile', 'short', '--probe', '--out', out]);
    await waitFor('a probe window running', () => (run.output().includes('(d) probe agent, before') ? true : undefined), { timeoutMs: 60_000 });
    const pid = run.child.pid ?? -1;
    const pods = (await sh('ip', ['netns', 'list'])).split('\n').filter((l) => l.startsWith(`${LAB_PREFIX}${pid}-`) && /-pod\d+/.test(l));
    expect(pods).toHaveLength(3);
    // The agent running the probe window in each pod (in the pods of node2 and node3 started for --probe only).
    const pidsIn = (ns: string) => sh('ip', ['netns', 'pids', ns.split(' ')[0] ?? '']).then((out) => out.split('\n').filter(Boolean).map(Number));
    const perPod = await waitFor('an agent in every pod', async () => {
      const p = await Promise.all(pods.map(pidsIn));
      return p.every((x) => x.length > 0) ? p : undefined;
    });
    expect(perPod.map((p) => p.length)).toEqual([1, 1, 1]);
    const agentPids = perPod.flat();
    run.child.kill('SIGTERM');
    const code = await run.exited;
    expect({ code, output: code === 143 ? '' : run.output() }).toEqual({ code: 143, output: '' });
    expect(await leftovers(pid)).toEqual([]);
    const alive = agentPids.filter((p) => {
      try {
        process.kill(p, 0);
        return true;
      } catch {
        return false;
      }
    });
    expect(alive).toEqual([]);
  }, 120_000);
});
