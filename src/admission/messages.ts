// Pure: what the admission warning says, from the model's own texts. The risk is the root cause's summary in the
// catalogue (src/model/root-causes.ts, the words status, Events and `loopguard doctor` use); the fix names the
// annotation or the Service DNS name for this very object, with the spellings of src/api/annotations.ts. The
// generator (scripts/gen-admission.ts) turns these into the CEL of config/components/admission-warnings; a unit test keeps the committed
// YAML equal to what it generates.
import { IngressAnnotation, ServiceAnnotation } from '../api/annotations.js';
import { ROOT_CAUSES, type RootCauseId } from '../model/root-causes.js';
import { TOPOLOGY_ADVICE } from '../model/topology.js';

/** Placeholders a fix may hold: the object's Service DNS name, its namespace, the kube-proxy version to upgrade to. */
export type Slot = 'dns' | 'namespace' | 'upgradeTo';

const ANNOTATE = `set ${ServiceAnnotation.PreventLoopback}: "true" on it (kube-proxy then answers the VIP on the node and TKE moves its health checks to 100.64.0.0/10), or let a LoopbackPolicy in Enforce mode do it`;
const CALL_BY_NAME = 'in-cluster callers can use {dns} instead of the CLB address';

/** The fix for an object of this root cause; `{slot}` is filled in by the policy. */
export const FIXES: Partial<Record<RootCauseId, string>> = {
  PodSourceNotMasqueraded: `${ANNOTATE}; ${CALL_BY_NAME}`,
  DirectAccessSameNode: `${ANNOTATE}; ${CALL_BY_NAME}`,
  KubeProxyTooOld: `upgrade the kube-system/kube-proxy DaemonSet image to {upgradeTo} or later, then set ${ServiceAnnotation.PreventLoopback}: "true" (a LoopbackPolicy in Enforce mode does it); until then ${CALL_BY_NAME}`,
  KubeProxyVersionUnknown: `${CALL_BY_NAME}; set the operator flag --kube-proxy-version (or --kube-proxy-prevent-loopback) so loopguard can tell whether prevent-loopback fixes it`,
  KubeProxyModeUnknown: `${CALL_BY_NAME}; set the operator flags --kube-proxy-mode and --kube-proxy-version so loopguard can decide`,
  L7Loopback: `turn on keepalive for its CLB's listeners through a TkeServiceConfig (${IngressAnnotation.TkeServiceConfigAuto}: "true", then keepaliveEnable: 1 in it; the account needs the CLB L7 SNAT + keepalive capability), or let a LoopbackPolicy in Enforce mode do it; in-cluster callers can call the backend Service by its DNS name (<service>.{namespace}.svc.cluster.local)`,
};

/** For a root cause without its own fix: the topology advice every at-risk target gets. */
export const FALLBACK_FIX = TOPOLOGY_ADVICE;

/** Where to read more; `{namespace}` is the object's. */
export const MORE = 'loopguard doctor -n {namespace}; docs/diagnosis.md';

/** The at-risk root causes and their summaries: the warning's "risk" part. */
export function riskTexts(): Array<[RootCauseId, string]> {
  return (Object.entries(ROOT_CAUSES) as Array<[RootCauseId, { verdict: string; summary: string }]>)
    .filter(([, c]) => c.verdict === 'AtRisk')
    .map(([id, c]) => [id, c.summary]);
}

/** The whole warning for one object, as the policy builds it (the unit tests compare the CEL's output with it). */
export function warningText(o: { kind: string; namespace: string; name: string; rootCause: RootCauseId; kubeProxy: string; upgradeTo: string }): string {
  const fill = (t: string) =>
    t.replaceAll('{dns}', `${o.name}.${o.namespace}.svc.cluster.local`).replaceAll('{namespace}', o.namespace).replaceAll('{upgradeTo}', o.upgradeTo);
  const where = o.kind === 'Service' ? ` in this cluster (${o.kubeProxy})` : '';
  return `loopguard: ${o.kind} ${o.namespace}/${o.name} is at risk of CLB loopback${where}: ${ROOT_CAUSES[o.rootCause].summary} [${o.rootCause}]. Fix: ${fill(FIXES[o.rootCause] ?? FALLBACK_FIX)}. More: ${fill(MORE)}`;
}
