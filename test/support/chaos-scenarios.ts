// The chaos scenarios (issue 13 #4), shared by the suite (short profile, asserts) and bench/chaos.ts (long
// profile, prints). Each returns figures and pushes every broken invariant onto `run.violations` (a string that
// names the phase), so the suite can assert on the list and the bench can print it.
//
// Kill points are counts of loopguard's CLB calls since the phase began (the emulator counts them exactly), drawn
// from the seeded RNG: k in [1, 3N] during an Enforce (about 5 calls per CLB: a read, 2 writes, 2 task polls), in
// [1, N] during a revert (at least one read per CLB), in [N, 4N] for the leader (past its first reads). If a phase
// ends before its k-th call, the kill comes when the trigger gives up (`reached: false` in the figures).
import { callsByCallerAndAction, type WriteLogEntry } from '../../sim/clb-emulator/index.js';
import { restartApiserver } from '../controlplane/launcher.js';
import { auditListsAndWatches, compactEtcd, readAuditLog } from '../controlplane/disruption.js';
import { doubleWrites, effectiveWrites, enforceGaps, interleavedWriters, isEffective, revertGaps } from './chaos-checks.js';
import { Replica } from './chaos-replica.js';
import { REPLICA_CALLERS, type ChaosRng, type ChaosWorld } from './chaos-world.js';
import { waitFor } from './kube.js';
import { OPERATOR_NAMESPACE } from './operator.js';
import { applyPolicy, deletePolicy, policyManifest } from './policy.js';

const OPERATOR_ARGS = ['--drift-check-interval=30s'];
const isLoopguard = (caller: string): boolean => (REPLICA_CALLERS as readonly string[]).includes(caller);
const CONVERGE_TIMEOUT_MS = 180_000;

export interface PhaseFigure {
  phase: string;
  /** The kill point drawn (loopguard CLB calls into the phase) and the count when the kill landed. */
  k: number;
  callsAtKill: number;
  reached: boolean;
  msIntoPhase: number;
  /** Kill → replacement ready (caches synced). */
  restartMs: number;
  /** Kill → converged. */
  convergeMs: number;
  /** Every write accepted in the phase, all callers; effective ones; the most effective writes one listener got. */
  writes: number;
  effective: number;
  /** Effective writes by caller (loopguard's replicas, TKE's put-backs). */
  effectiveBy: Record<string, number>;
  maxPerListener: number;
  faults: number;
}

export class ChaosRun {
  readonly violations: string[] = [];
  readonly phases: PhaseFigure[] = [];

  constructor(
    readonly world: ChaosWorld,
    readonly rng: ChaosRng,
    readonly log: (line: string) => void,
  ) {}

  get admin() {
    return this.world.tke.emulator.admin;
  }

  async lastWriteSeq(): Promise<number> {
    return (await this.admin.writes()).at(-1)?.seq ?? 0;
  }

  /** Loopguard's CLB calls since `mark`, and the faults injected since then (every caller). */
  async callsSince(mark: string): Promise<{ loopguard: number; faults: number }> {
    const since = await this.admin.statsSince(mark);
    let loopguard = 0;
    for (const [caller, actions] of Object.entries(callsByCallerAndAction(since))) {
      if (isLoopguard(caller)) loopguard += Object.values(actions).reduce((a, b) => a + b, 0);
    }
    const errors = Object.values(since.errors).reduce((sum, codes) => sum + Object.entries(codes).filter(([c]) => c !== 'RequestLimitExceeded').reduce((a, [, n]) => a + n, 0), 0);
    return { loopguard, faults: errors + since.tasks.failed };
  }

  /** Resolves once loopguard has made `k` CLB calls since `mark` (or after `timeoutMs`, with `reached: false`). */
  async trigger(mark: string, k: number, timeoutMs = 60_000): Promise<{ calls: number; reached: boolean }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { loopguard } = await this.callsSince(mark);
      if (loopguard >= k) return { calls: loopguard, reached: true };
      if (Date.now() > deadline) return { calls: loopguard, reached: false };
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async converge(what: string, gaps: () => Promise<string[]>, context: () => string): Promise<void> {
    await waitFor(what, gaps, { until: (g) => g.length === 0, timeoutMs: CONVERGE_TIMEOUT_MS, intervalMs: 250, context });
  }

  /** Judges the writes of a phase: at most one effective write per listener, whoever wrote. */
  judgeWrites(phase: string, log: WriteLogEntry[]): Pick<PhaseFigure, 'writes' | 'effective' | 'effectiveBy' | 'maxPerListener'> {
    for (const v of doubleWrites(log)) this.violations.push(`${phase}: ${v}`);
    const perListener = [...effectiveWrites(log).values()];
    const effectiveBy: Record<string, number> = {};
    for (const e of log) if (isEffective(e)) effectiveBy[e.caller] = (effectiveBy[e.caller] ?? 0) + 1;
    return { writes: log.length, effective: perListener.reduce((a, b) => a + b, 0), effectiveBy, maxPerListener: Math.max(0, ...perListener) };
  }

  /**
   * One phase with one kill: `begin` starts it, the replica is SIGKILLed at the drawn point and comes back, and
   * the phase must converge (`gaps` empty) with at most one effective write per listener.
   */
  async killPhase(phase: string, replica: Replica, kMax: number, begin: () => Promise<void>, gaps: () => Promise<string[]>): Promise<PhaseFigure> {
    const k = this.rng.int(1, kMax);
    await this.admin.markStats(phase);
    const seq0 = await this.lastWriteSeq();
    const t0 = Date.now();
    await begin();
    const hit = await this.trigger(phase, k);
    const killedAt = await replica.kill();
    await replica.ready();
    const restartMs = Date.now() - killedAt;
    await this.converge(`${phase} converged after a kill at call ${hit.calls}`, gaps, () => replica.logs());
    const figure: PhaseFigure = {
      phase,
      k,
      callsAtKill: hit.calls,
      reached: hit.reached,
      msIntoPhase: killedAt - t0,
      restartMs,
      convergeMs: Date.now() - killedAt,
      ...this.judgeWrites(phase, await this.admin.writes(seq0)),
      faults: (await this.callsSince(phase)).faults,
    };
    this.phases.push(figure);
    this.log(
      `${phase}: kill at loopguard call ${hit.calls} (k=${k}${hit.reached ? '' : ', phase ended first'}, ${figure.msIntoPhase} ms in), ready again in ${restartMs} ms, ` +
        `converged ${figure.convergeMs} ms after the kill; writes ${figure.writes}, effective ${JSON.stringify(figure.effectiveBy)}, max ${figure.maxPerListener}/listener; faults ${figure.faults}`,
    );
    return figure;
  }

  enforce(): Promise<void> {
    return applyPolicy(policyManifest(this.world.policy, { mode: 'Enforce', revertOnDelete: true }), { kubeconfig: this.world.cp.kubeconfig }).then((res) => {
      if (res.code !== 0) throw new Error(`kubectl apply: ${res.stderr}`);
    });
  }

  revert(): Promise<void> {
    return deletePolicy(this.world.policy, { wait: false });
  }
}

/** `cycles` × (Enforce with a kill → converged; revert with a kill → restored), one replica restarted like a pod. */
export async function killCycles(run: ChaosRun, cycles: number): Promise<void> {
  const n = run.world.services.length;
  const replica = new Replica(run.world.tke, { identity: 'chaos-0', extraArgs: OPERATOR_ARGS });
  await replica.start();
  try {
    for (let c = 1; c <= cycles; c++) {
      await run.killPhase(`enforce-${c}`, replica, 3 * n, () => run.enforce(), () => enforceGaps(run.world));
      await run.killPhase(`revert-${c}`, replica, n, () => run.revert(), () => revertGaps(run.world));
    }
  } finally {
    await replica.stop();
  }
}

export interface LeaderFigure {
  killAtCall: number;
  takeoverMs: number;
  convergeMs: number;
  writesByReplica: Record<string, number>;
}

export interface ApiserverFigure {
  compactedRevision: number;
  /** Watches resumed at a resourceVersion etcd had compacted away, and the resources listed again after them. */
  expiredWatches: number;
  relisted: string[];
  convergeMs: number;
  /** Replica exits on their own while the apiserver was away (a leader that cannot renew exits on purpose). */
  exits: number;
}

/**
 * Two replicas, each with its own CLB credentials. The leader is SIGKILLed (its pod gone) at a drawn point of an
 * Enforce: the standby must take over within 20 s, and the write log must show no listener written by the two
 * in turn. Then, during the revert, the apiserver is SIGKILLed and etcd compacted under it, so every watch comes
 * back to a 410: the replicas must relist and the revert must still restore everything.
 */
export async function leaderAndApiserver(run: ChaosRun): Promise<{ leader: LeaderFigure; apiserver: ApiserverFigure }> {
  const { world } = run;
  const n = world.services.length;
  const a = new Replica(world.tke, { identity: 'chaos-a', caller: REPLICA_CALLERS[0], extraArgs: OPERATOR_ARGS });
  const b = new Replica(world.tke, { identity: 'chaos-b', caller: REPLICA_CALLERS[1], extraArgs: OPERATOR_ARGS });
  const replicaLogs = () => `--- chaos-a ---\n${a.logs()}\n--- chaos-b ---\n${b.logs()}`;
  let standby: Replica | undefined;
  try {
    await a.start();
    await waitFor('chaos-a leads', async () => ((await a.isLeader()) ? true : undefined), { timeoutMs: 30_000 });
    await b.start();

    // 1. Leader killed during an Enforce.
    await run.admin.markStats('leader');
    const seq0 = await run.lastWriteSeq();
    await run.enforce();
    // From the N-th call on: past the first reads, so the leader usually dies with writes of its own in flight.
    const hit = await run.trigger('leader', run.rng.int(n, 4 * n));
    const killedAt = await a.kill({ restart: false });
    await waitFor('chaos-b takes over', async () => ((await b.isLeader()) ? true : undefined), { timeoutMs: 40_000, intervalMs: 100, context: replicaLogs });
    const takeoverMs = Date.now() - killedAt;
    if (takeoverMs >= 20_000) run.violations.push(`leader: takeover took ${takeoverMs} ms (≥ 20 s)`);
    await run.converge('Enforce converged after the leader was killed', () => enforceGaps(world), replicaLogs);
    const log = await run.admin.writes(seq0);
    for (const v of interleavedWriters(log, isLoopguard)) run.violations.push(`leader: two writers on ${v}`);
    const early = log.filter((e) => e.caller === REPLICA_CALLERS[1] && e.acceptedAtMs < killedAt);
    if (early.length > 0) run.violations.push(`leader: the standby wrote ${early.length} time(s) while the leader lived (first ${early[0]?.loadBalancerId}/${early[0]?.listenerId})`);
    run.judgeWrites('leader', log);
    const writesByReplica: Record<string, number> = {};
    for (const e of log) writesByReplica[e.caller] = (writesByReplica[e.caller] ?? 0) + 1;
    const leader: LeaderFigure = { killAtCall: hit.calls, takeoverMs, convergeMs: Date.now() - killedAt, writesByReplica };
    run.log(`leader: killed chaos-a at loopguard call ${hit.calls}; chaos-b led after ${takeoverMs} ms; converged ${leader.convergeMs} ms after the kill; writes ${JSON.stringify(writesByReplica)}`);

    // 2. chaos-a's pod comes back as a standby (it has no Lease to lose, so it is the replica that surely lives
    // through the apiserver's absence); then the apiserver dies and etcd is compacted during the revert.
    standby = new Replica(world.tke, { identity: 'chaos-a', caller: REPLICA_CALLERS[0], extraArgs: OPERATOR_ARGS });
    await standby.start();
    await run.admin.markStats('apiserver');
    const seq1 = await run.lastWriteSeq();
    const exitsBefore = b.deaths.length + standby.deaths.length;
    await run.revert();
    await run.trigger('apiserver', run.rng.int(1, n));
    const audit = auditListsAndWatches(world.cp, `system:serviceaccount:${OPERATOR_NAMESPACE}:loopguard`);
    const compactedRevision = await compactEtcd(world.cp);
    const disruptedAt = Date.now();
    await restartApiserver(world.cp, 1_000);
    await run.converge('revert converged after the apiserver restart and etcd compaction', () => revertGaps(world), () => `${replicaLogs()}\n--- standby ---\n${standby?.logs() ?? ''}`);
    const convergeMs = Date.now() - disruptedAt;
    // An informer whose watch broke retries with backoff (up to 30 s), so its 410 and relist may come late.
    let relists = relistsAfterExpiry([], compactedRevision);
    await waitFor(
      'every expired watch followed by a list',
      () => (relists = relistsAfterExpiry(readAuditLog(audit), compactedRevision)),
      { until: (r) => r.expired > 0 && r.notRelisted.length === 0, timeoutMs: 60_000, intervalMs: 500 },
    ).catch(() => undefined);
    for (const resource of relists.notRelisted) run.violations.push(`apiserver: a watch of ${resource} expired (410) and was not followed by a list within 60 s`);
    run.judgeWrites('apiserver', await run.admin.writes(seq1));
    const apiserver: ApiserverFigure = { compactedRevision, expiredWatches: relists.expired, relisted: relists.relisted, convergeMs, exits: b.deaths.length + standby.deaths.length - exitsBefore };
    run.log(
      `apiserver: SIGKILLed and etcd compacted at revision ${compactedRevision} mid-revert; ${relists.expired} watches resumed at an expired resourceVersion, ` +
        `relisted ${relists.relisted.join(', ')}; restored ${convergeMs} ms later; replica exits meanwhile ${apiserver.exits}`,
    );
    return { leader, apiserver };
  } finally {
    await a.stop();
    await b.stop();
    await standby?.stop();
  }
}

/**
 * From the audit log: watches that asked for a resourceVersion below the compaction (expired: the apiserver
 * answers 410 Gone), the resources listed after such a watch (client-node relists only after a 410: a watch that
 * merely broke resumes from its resourceVersion), and those never listed again.
 */
export function relistsAfterExpiry(events: ReturnType<typeof readAuditLog>, compacted: number): { expired: number; relisted: string[]; notRelisted: string[] } {
  const expiredAt = new Map<string, number>();
  let expired = 0;
  const relisted = new Set<string>();
  for (const e of events) {
    const resource = e.objectRef?.resource ?? '';
    const rv = Number(new URL(e.requestURI, 'https://x').searchParams.get('resourceVersion') ?? 'NaN');
    const at = Date.parse(e.stageTimestamp);
    if (e.verb === 'watch' && Number.isFinite(rv) && rv > 0 && rv < compacted) {
      expired++;
      if (!expiredAt.has(resource)) expiredAt.set(resource, at);
    } else if (e.verb === 'list' && expiredAt.has(resource) && at >= (expiredAt.get(resource) ?? Infinity)) {
      relisted.add(resource);
    }
  }
  return { expired, relisted: [...relisted].sort(), notRelisted: [...expiredAt.keys()].filter((r) => !relisted.has(r)).sort() };
}

export interface PausedLeaderFigure {
  pauseAtCall: number;
  /** Pause → the standby leads. */
  takeoverMs: number;
  /** Writes sent before the freeze that landed after the thaw (tolerated: nothing can call them back). */
  inFlightLanded: number;
  /** Writes the thawed leader decided after the thaw (must be 0: its fence), and whether it then exited. */
  decidedAfterThaw: number;
  exited: boolean;
}

/**
 * A leader frozen mid-Enforce (SIGSTOP: a VM pause, a long GC) past its lease while the standby takes over and
 * converges, then thawed (SIGCONT): it runs on from where it stopped, with writes queued from a plan that is
 * no longer true, and the renewal that would tell it so runs only after them. Its fence (LeaderElector.mayWrite,
 * asked before every step and every CLB submission) must stop them all, and the process exits.
 */
export async function pausedLeader(run: ChaosRun): Promise<PausedLeaderFigure> {
  const { world } = run;
  const n = world.services.length;
  const a = new Replica(world.tke, { identity: 'chaos-a', caller: REPLICA_CALLERS[0], extraArgs: OPERATOR_ARGS });
  const b = new Replica(world.tke, { identity: 'chaos-b', caller: REPLICA_CALLERS[1], extraArgs: OPERATOR_ARGS });
  const replicaLogs = () => `--- chaos-a ---\n${a.logs()}\n--- chaos-b ---\n${b.logs()}`;
  let paused = false;
  try {
    await a.start();
    await waitFor('chaos-a leads', async () => ((await a.isLeader()) ? true : undefined), { timeoutMs: 30_000 });
    await b.start();
    await run.admin.markStats('paused');
    await run.enforce();
    // Among its writes (past the first reads), so writes are queued behind running CLB tasks when it freezes.
    const hit = await run.trigger('paused', run.rng.int(2 * n, 3 * n));
    const pausedAt = a.pause();
    paused = true;
    await waitFor('chaos-b takes over from the frozen leader', async () => ((await b.isLeader()) ? true : undefined), { timeoutMs: 40_000, intervalMs: 100, context: replicaLogs });
    const takeoverMs = Date.now() - pausedAt;
    await run.converge('Enforce converged while the old leader was frozen', () => enforceGaps(world), replicaLogs);
    const seq = await run.lastWriteSeq();
    const deaths = a.deaths.length;
    const resumedAt = a.resume();
    paused = false;
    await waitFor('the thawed leader exits', async () => (a.deaths.length > deaths ? true : undefined), { timeoutMs: 30_000, intervalMs: 100, context: replicaLogs });
    // Whatever it still had in flight has landed or failed by now: its exit ends it. A write it had sent before the
    // freeze may still land after the thaw (its bytes were queued in the frozen process; no client-side fence can
    // call those back). One it decided after the thaw is the fence's failure: on one CLB, loopguard sends a write
    // only after it has seen the previous one's task finish, so a late write whose predecessor on the CLB finished
    // while the process was frozen was decided after the thaw.
    const all = await run.admin.writes();
    const late = all.filter((e) => e.seq > seq && e.caller === REPLICA_CALLERS[0]);
    const decidedLate = late.filter((w) => {
      const before = all.filter((e) => e.caller === REPLICA_CALLERS[0] && e.loadBalancerId === w.loadBalancerId && e.seq < w.seq).at(-1);
      return before !== undefined && (before.finishedAtMs ?? Infinity) > pausedAt;
    });
    for (const w of decidedLate) {
      run.violations.push(`paused leader: chaos-a wrote ${w.loadBalancerId}/${w.listenerId} ${w.acceptedAtMs - resumedAt} ms after it was thawed, after seeing a task finish that ended while it was frozen: decided after the thaw, while chaos-b led`);
    }
    const figure: PausedLeaderFigure = { pauseAtCall: hit.calls, takeoverMs, inFlightLanded: late.length - decidedLate.length, decidedAfterThaw: decidedLate.length, exited: a.deaths.length > deaths };
    run.log(
      `paused leader: froze chaos-a at loopguard call ${hit.calls}; chaos-b led after ${takeoverMs} ms and converged; thawed, chaos-a delivered ${figure.inFlightLanded} ` +
        `write(s) sent before the freeze, decided ${figure.decidedAfterThaw} after it, and exited`,
    );
    return figure;
  } finally {
    if (paused) a.resume();
    await a.stop();
    await b.stop();
  }
}
