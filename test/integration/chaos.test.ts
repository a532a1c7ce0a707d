// Chaos (issue 13 #4), the short profile of `npm test`: 10 at-risk Services (20 listeners) under 20 % CLB faults;
// 2 cycles of an Enforce and a revert with the operator SIGKILLed at a drawn point of each (4 kill points), then
// two replicas with the leader killed during an Enforce (a 5th), and the apiserver SIGKILLed with etcd compacted
// under it during the revert (every watch comes back 410). After each disruption everything converges, with at
// most one effective CLB write per listener, no original lost, and never two replicas writing one listener in
// turn. `npm run bench:chaos` runs the long profile (50 Services, 20 kill points each way) and prints its figures.
// Replay a failure with the seed it prints: CHAOS_SEED=<seed> npm test -- --testPathPatterns chaos
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CHAOS_PROFILES, chaosFaultPlan, ChaosRng, chaosSeed, startChaosWorld, type ChaosWorld } from '../support/chaos-world.js';
import { ChaosRun, killCycles, leaderAndApiserver, pausedLeader } from '../support/chaos-scenarios.js';

const PROFILE = CHAOS_PROFILES.short;
const SEED = chaosSeed();
const log = (line: string) => console.log(`[chaos seed=${SEED}] ${line}`);

describe(`chaos (CHAOS_SEED=${SEED})`, () => {
  let world: ChaosWorld;
  let run: ChaosRun;

  beforeAll(async () => {
    world = await startChaosWorld(PROFILE, log);
    await world.tke.emulator.admin.setFaults(chaosFaultPlan(SEED, PROFILE.faultRate));
    run = new ChaosRun(world, new ChaosRng(SEED), log);
  }, 180_000);

  afterAll(async () => {
    await world?.stop();
  }, 60_000);

  it(`converges after kill -9 at ${PROFILE.cycles * 2} drawn points of Enforce and revert, one write per listener, originals kept`, async () => {
    await killCycles(run, PROFILE.cycles);
    expect(run.phases.map((p) => p.phase)).toEqual(Array.from({ length: PROFILE.cycles }, (_, i) => [`enforce-${i + 1}`, `revert-${i + 1}`]).flat());
    // The Enforces did write (each listener exactly once, whoever survived); the faults did fire.
    for (const p of run.phases.filter((x) => x.phase.startsWith('enforce'))) expect(p.maxPerListener).toBe(1);
    expect(run.phases.reduce((a, p) => a + p.faults, 0)).toBeGreaterThan(0);
    expect({ seed: SEED, violations: run.violations }).toEqual({ seed: SEED, violations: [] });
  }, 600_000);

  it('hands over to the standby within 20 s of a leader kill with never two writers, and survives an apiserver restart with expired watches', async () => {
    const { leader, apiserver } = await leaderAndApiserver(run);
    expect(leader.takeoverMs).toBeLessThan(20_000);
    expect(leader.writesByReplica['loopguard-b']).toBeGreaterThan(0);
    expect(apiserver.expiredWatches).toBeGreaterThan(0);
    expect(apiserver.relisted).toEqual(expect.arrayContaining(['loopbackpolicies', 'services']));
    expect({ seed: SEED, violations: run.violations }).toEqual({ seed: SEED, violations: [] });
  }, 600_000);

  it('a leader frozen past its lease (SIGSTOP) and thawed after the standby took over decides no write more and exits', async () => {
    const paused = await pausedLeader(run);
    expect(paused.exited).toBe(true);
    expect(paused.decidedAfterThaw).toBe(0);
    expect({ seed: SEED, violations: run.violations }).toEqual({ seed: SEED, violations: [] });
  }, 300_000);
});
