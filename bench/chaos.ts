// bench/chaos: the chaos suite's long profile (issue 13 #4). On a control plane of its own with the local TKE and
// 20 % of the CLB calls failing: N at-risk Services (2 listeners each), C cycles of an Enforce and a revert with the
// operator SIGKILLed at a drawn point of each (2·C kill points, restarted like a pod), then two replicas with the
// leader killed during an Enforce and the apiserver SIGKILLed with etcd compacted under it during the revert.
// Prints, per kill: where it landed, time until the replacement was ready and until everything converged, the
// writes and effective writes per listener, the faults injected; then the takeover time, the expired watches and
// relists, and every broken invariant (exit status 1 if any). Same code as test/integration/chaos.test.ts.
//
//   npm run bench:chaos                          (long: --targets 50 --cycles 20 --fault-rate 0.2)
//   npm run bench:chaos -- --profile short       (what npm test runs)
//   CHAOS_SEED=123 npm run bench:chaos           (replay; or --seed 123)
import { parseArgs } from 'node:util';
import { CHAOS_PROFILES, chaosFaultPlan, ChaosRng, chaosSeed, startChaosWorld, type ChaosProfile } from '../test/support/chaos-world.js';
import { ChaosRun, killCycles, leaderAndApiserver, pausedLeader, type PhaseFigure } from '../test/support/chaos-scenarios.js';
import { runBench } from './support.js';

const { values } = parseArgs({
  options: {
    profile: { type: 'string', default: 'long' },
    targets: { type: 'string' },
    cycles: { type: 'string' },
    'fault-rate': { type: 'string' },
    seed: { type: 'string' },
  },
});
const base = CHAOS_PROFILES[values.profile as ChaosProfile['name']];
if (!base) throw new Error(`--profile must be short or long, got ${values.profile}`);
const profile: ChaosProfile = {
  ...base,
  targets: Number(values.targets ?? base.targets),
  cycles: Number(values.cycles ?? base.cycles),
  faultRate: Number(values['fault-rate'] ?? base.faultRate),
};
const SEED = chaosSeed(values.seed ?? process.env.CHAOS_SEED);
const log = (s: string) => console.log(`[bench:chaos] ${s}`);

const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
  return s.length === 0 ? 'n/a' : `p50 ${(at(50) / 1000).toFixed(1)} s, max ${((s.at(-1) ?? NaN) / 1000).toFixed(1)} s`;
};

function table(phases: PhaseFigure[]): string {
  const head = ['phase', 'k', 'call at kill', 'ms in', 'ready ms', 'converged ms', 'writes', 'effective (by caller)', 'max/listener', 'faults'];
  const rows = phases.map((p) => [p.phase, p.k, `${p.callsAtKill}${p.reached ? '' : '*'}`, p.msIntoPhase, p.restartMs, p.convergeMs, p.writes, JSON.stringify(p.effectiveBy), p.maxPerListener, p.faults].map(String));
  return [head, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

async function main(): Promise<void> {
  log(`seed ${SEED} (replay: CHAOS_SEED=${SEED}); profile ${profile.name}: ${profile.targets} Services × 2 listeners, ${profile.cycles} cycles, faults ${profile.faultRate * 100} %`);
  const t0 = Date.now();
  const world = await startChaosWorld(profile, log);
  process.env.KUBECONFIG = world.cp.kubeconfig;
  try {
    const admin = world.tke.emulator.admin;
    await admin.setFaults(chaosFaultPlan(SEED, profile.faultRate));
    await admin.markStats('chaos');
    const run = new ChaosRun(world, new ChaosRng(SEED), log);
    await killCycles(run, profile.cycles);
    const { leader, apiserver } = await leaderAndApiserver(run);
    const paused = await pausedLeader(run);

    const all = await admin.statsSince('chaos');
    const calls = Object.values(all.calls).reduce((a, b) => a + b, 0);
    const faults = Object.values(all.errors).reduce((s, codes) => s + Object.entries(codes).filter(([c]) => c !== 'RequestLimitExceeded').reduce((a, [, n]) => a + n, 0), 0) + all.tasks.failed;
    const enforce = run.phases.filter((p) => p.phase.startsWith('enforce'));
    const revert = run.phases.filter((p) => p.phase.startsWith('revert'));
    console.log(`\n${table(run.phases)}\n(* the phase ended before the k-th call; the kill came when the trigger gave up)\n`);
    console.log(`seed                          ${SEED}`);
    console.log(`kills (SIGKILL)               ${run.phases.length + 1}: ${enforce.length} during Enforce, ${revert.length} during revert, 1 leader`);
    console.log(`replacement ready after kill  ${stat(run.phases.map((p) => p.restartMs))}`);
    console.log(`converged after kill          Enforce ${stat(enforce.map((p) => p.convergeMs))}; revert ${stat(revert.map((p) => p.convergeMs))}`);
    console.log(`effective writes per listener max ${Math.max(...run.phases.map((p) => p.maxPerListener))} in any phase (Enforce: loopguard ${enforce.reduce((a, p) => a + (p.effectiveBy['loopguard'] ?? 0), 0)}; revert: loopguard ${revert.reduce((a, p) => a + (p.effectiveBy['loopguard'] ?? 0), 0)}, TKE ${revert.reduce((a, p) => a + (p.effectiveBy['tke'] ?? 0), 0)})`);
    console.log(`faults injected               ${faults} of ${calls} CLB calls (${((100 * faults) / Math.max(1, calls)).toFixed(1)} %), all callers`);
    console.log(`leader kill                   at loopguard call ${leader.killAtCall}; takeover ${(leader.takeoverMs / 1000).toFixed(1)} s (bound 20 s); converged ${(leader.convergeMs / 1000).toFixed(1)} s after; writes ${JSON.stringify(leader.writesByReplica)}`);
    console.log(`apiserver restart + compaction revision ${apiserver.compactedRevision}; ${apiserver.expiredWatches} watches expired (410); relisted ${apiserver.relisted.join(', ')}; restored ${(apiserver.convergeMs / 1000).toFixed(1)} s after; replica exits ${apiserver.exits}`);
    console.log(`paused leader                 frozen at loopguard call ${paused.pauseAtCall}; standby led after ${(paused.takeoverMs / 1000).toFixed(1)} s; thawed: ${paused.inFlightLanded} write(s) sent before the freeze landed, ${paused.decidedAfterThaw} decided after it; exited: ${paused.exited}`);
    console.log(`total                         ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    console.log(`violations                    ${run.violations.length === 0 ? 'none' : `\n  ${run.violations.join('\n  ')}`}`);
    if (run.violations.length > 0) process.exitCode = 1;
  } finally {
    await world.stop();
  }
}

runBench(main, (err) => console.error(`[bench:chaos] seed ${SEED} failed (replay: CHAOS_SEED=${SEED}):`, err));
