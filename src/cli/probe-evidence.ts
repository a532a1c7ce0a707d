// `loopguard doctor` shows what the probe agents measured next to the verdict it finds (docs/probe.md §11.3): the plan
// ConfigMap and the LoopbackProbeReports of loopguard's namespace, judged as the operator judges them (fresh against
// the current plan, the worst node's p99, the nodes that saw failures), minus "since Enforce", which only the
// operator's memory holds. Read-only (list calls, as the rest of the scan); absent (no probe installed) is nothing to
// say, refused is one note.
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, VERSION, type Verdict } from '../api/loopbackpolicy.js';
import { PROBE_PLAN_KEY, PROBE_PLAN_NAME, PROBE_REPORT_PLURAL, type ProbeReport } from '../api/probe.js';
import { targetKey, type TargetRef } from '../model/facts.js';
import { EvidenceStore } from '../probe/evidence-store.js';
import { renderJudgement } from '../probe/evidence.js';
import { targetOfProbeId } from '../probe/plan-builder.js';
import { parseCidr, parsePlan, PRIVATE_RANGES } from '../probe/plan.js';
import { optional } from './cluster-reads.js';

/** loopguard's namespace where `--loopguard-namespace` does not say. */
export const DEFAULT_LOOPGUARD_NAMESPACE = 'loopguard-system';

export interface ProbeReads {
  plan?: { text: string; version: string };
  reports: ProbeReport[];
}

export async function readProbe(kc: KubeConfig, namespace: string, notes: string[]): Promise<ProbeReads> {
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const lacks = 'what the probe agents measured is not shown';
  const cm = await optional(`the probe plan (ConfigMap ${namespace}/${PROBE_PLAN_NAME})`, lacks, async () => (await core.listNamespacedConfigMap({ namespace, fieldSelector: `metadata.name=${PROBE_PLAN_NAME}` })).items[0] ?? null, notes, null);
  if (!cm) return { reports: [] };
  const list = await optional(`the probe reports (LoopbackProbeReports in ${namespace})`, lacks, async () => (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: PROBE_REPORT_PLURAL })) as { items: ProbeReport[] }, notes, { items: [] });
  return { plan: { text: cm.data?.[PROBE_PLAN_KEY] ?? '', version: cm.metadata?.resourceVersion ?? '' }, reports: list?.items ?? [] };
}

/** Each probed target's measured line (by targetKey), judged against the verdict doctor found. Pure. */
export function measuredLines(reads: ProbeReads, targets: readonly (TargetRef & { verdict: Verdict })[], now: number): Map<string, string> {
  const out = new Map<string, string>();
  if (!reads.plan) return out;
  const parsed = parsePlan(reads.plan.text, { ranges: PRIVATE_RANGES.map((r) => parseCidr(r)!) });
  if (!parsed.ok) return out;
  const probes = parsed.plan.targets.flatMap((entry) => {
    const target = targetOfProbeId(entry.id);
    return target ? [{ entry, target }] : [];
  });
  const store = new EvidenceStore({ onChange: () => undefined, now: () => now });
  store.setPlan(reads.plan.version, parsed.plan.windowSeconds, probes);
  for (const r of reads.reports) store.report(r, false);
  for (const t of targets) if (t.verdict !== 'Conflict' && store.probed(t)) out.set(targetKey(t), renderJudgement(store.judge(t, t.verdict, false)));
  return out;
}
