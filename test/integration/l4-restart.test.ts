// L4 Enforce survives being killed between steps: originals are on the Service before any CLB write, so an
// operator killed while the writes fail (SIGKILL) resumes after a restart with one accepted write per listener;
// on deletion prevent-loopback comes off before any source goes back to the VIP, and a kill in between still
// ends with every original restored exactly. A drift made while the operator is down is corrected after the restart
// and reported as drift.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import type { ClbEmulator } from '../../sim/clb-emulator/index.js';
import { createNamespace, kubeConfig, waitFor } from '../support/kube.js';
import { atRiskServicesWithClbs, startLocalTke, type LocalTke } from '../support/local-tke.js';
import type { OperatorProcess } from '../support/operator.js';
import { applyPolicy, deletePolicy, policyManifest, waitForCondition, waitForPolicyGone } from '../support/policy.js';
import { findRecord } from '../support/records.js';

const PREVENT = 'service.cloud.tencent.com/prevent-loopback';

describe('L4 Enforce across operator kills', () => {
  let tke: LocalTke;
  let emulator: ClbEmulator;
  let operator: OperatorProcess | undefined;
  let namespaces: Set<string>;
  const kc = kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const start = async () => tke.startOperator({ leaderElect: false, extraArgs: ['--drift-check-interval=2s'] });
  const failWrites = () => emulator.admin.setFaults({ seed: 7, rules: [{ action: 'ModifyListener', rate: 1, kind: 'error', code: 'InternalError' }] });

  beforeAll(async () => {
    // TKE's sync re-applies only declared fields here: with the documented `all`, a sync TKE still had queued can
    // put a drifted source back before the restarted operator does, and the drift under test is loopguard's to find.
    tke = await startLocalTke({ operator: false, simulator: { syncScope: 'declared' } });
    ({ emulator, namespaces } = tke);
  });

  afterAll(async () => {
    await operator?.stop('SIGKILL');
    await tke?.stop();
  });

  it('resumes after kills during apply and during revert, restoring every original exactly', async () => {
    const ns = await createNamespace('l4-restart');
    namespaces.add(ns);
    const names = ['k-a', 'k-b'];
    const ids = await atRiskServicesWithClbs(tke, ns, names);
    const snapshot = async () => {
      const out: Record<string, unknown> = {};
      for (const id of ids) for (const l of (await emulator.admin.getLoadBalancer(id)).Listeners) out[`${id}/${l.ListenerId}`] = l.HealthCheck;
      return out;
    };
    const sources = async () => {
      const out: number[] = [];
      for (const id of ids) for (const l of (await emulator.admin.getLoadBalancer(id)).Listeners) out.push(l.HealthCheck?.SourceIpType ?? -1);
      return out;
    };
    const before = await snapshot();
    await emulator.admin.resetStats();

    // 1. Kill after the originals are recorded, while every ModifyListener fails.
    await failWrites();
    operator = await start();
    const policy = { namespace: ns, name: 'restart' };
    expect((await applyPolicy(policyManifest(policy, { mode: 'Enforce', revertOnDelete: true }))).code).toBe(0);
    // Once failed at its 30 s on a loaded CI, with nothing to say why: the operator's log now comes with a timeout.
    await waitFor('originals recorded for every Service', async () => {
      for (const n of names) if (!(await findRecord('Service', ns, n))) return undefined;
      return true;
    }, { timeoutMs: 60_000, context: () => operator?.logs().slice(-4000) ?? '' });
    await waitFor('a write attempted', async () => ((await emulator.admin.stats()).calls.ModifyListener ? true : undefined));
    await operator.stop('SIGKILL');
    expect(await sources()).toEqual([0, 0, 0, 0]);
    for (const n of names) expect((await core.readNamespacedService({ namespace: ns, name: n })).metadata?.annotations?.[PREVENT]).toBeUndefined();

    await emulator.admin.clearFaults();
    operator = await start();
    await waitForCondition(policy, 'Ready', { timeoutMs: 40_000 });
    expect(await sources()).toEqual([1, 1, 1, 1]);
    const writes = (await emulator.admin.stats()).listenerWrites;
    expect(Object.values(writes)).toEqual([1, 1, 1, 1]);
    for (const n of names) expect((await core.readNamespacedService({ namespace: ns, name: n })).metadata?.annotations?.[PREVENT]).toBe('true');

    // 1b. Drift while loopguard is down: a restarted operator never saw that listener on 100.64, yet the
    // prevent-loopback it added proves the listener was converged, so it is corrected as drift (Warning Event).
    await operator.stop('SIGKILL');
    // TKE answers prevent-loopback by switching the Service's sources itself (docs/tencent-cloud.md §9 #1), so a TKE
    // sync still queued from the annotation above would undo the drift before the restarted operator reads the CLB:
    // loopguard then rightly finds nothing to correct and no DriftCorrected Event ever comes (seen once on a loaded
    // fresh machine: "timed out after 30 s, last value: undefined"; a TKE sync forced right after the drift
    // reproduces exactly that). Let TKE finish its work first; the drift under test is the one nobody repairs.
    await tke.simulator.resyncNow();
    const [driftLb = ''] = ids;
    const drifted = (await emulator.admin.getLoadBalancer(driftLb)).Listeners[0]?.ListenerId ?? '';
    const sinceDrift = (await emulator.admin.writes()).at(-1)?.seq ?? 0;
    await emulator.admin.patchListener(driftLb, drifted, { HealthCheck: { SourceIpType: 0 } });
    operator = await start();
    await waitFor(
      'drift found after the restart corrected, with DriftCorrected',
      async () => {
        if ((await sources()).some((x) => x !== 1)) return undefined;
        const ev = await core.listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${names[0]}` });
        return ev.items.some((e) => e.reason === 'DriftCorrected' && e.type === 'Warning' && e.message?.includes(drifted)) ? true : undefined;
      },
      { timeoutMs: 30_000 },
    );
    // loopguard's write repaired it, and only loopguard wrote that listener since the drift.
    const repairs = (await emulator.admin.writes(sinceDrift)).filter((w) => w.listenerId === drifted && w.changed.length > 0);
    expect(repairs.map((w) => w.caller)).toEqual(['loopguard']);

    // 2. Delete with restores failing: prevent-loopback comes off first while the sources stay on 100.64; kill there.
    await failWrites();
    await deletePolicy(policy, { wait: false });
    await waitFor('annotation off first', async () => {
      for (const n of names) {
        const s = await core.readNamespacedService({ namespace: ns, name: n });
        if (s.metadata?.annotations?.[PREVENT] !== undefined) return undefined;
      }
      return true;
    });
    expect(await sources()).toEqual([1, 1, 1, 1]);
    await operator.stop('SIGKILL');
    await emulator.admin.clearFaults();
    operator = await start();
    await waitForPolicyGone(policy, { timeoutMs: 40_000 });
    expect(await snapshot()).toEqual(before);
    for (const n of names) {
      const ann = (await core.readNamespacedService({ namespace: ns, name: n })).metadata?.annotations ?? {};
      expect(Object.keys(ann).filter((k) => k.startsWith('loopguard.dev/') || k === PREVENT)).toEqual([]);
    }
  });
});
