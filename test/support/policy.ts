// LoopbackPolicy helpers for integration suites. What a user does goes through kubectl (apply, get, delete), so every
// suite also exercises the CRD's printer, schema and short name; waits poll with `waitFor`, whose timeout message
// carries the policy as last read (conditions, targets, finalizers), which is what a failure needs to show. A wait
// reads through client-node in the test's own process: a poll every 100 ms through kubectl started a process of
// 0.2-0.5 s of CPU each time, which the operator under test then waited for (docs/development.md "Where the CPU goes").
import type { Condition } from '../../src/api/conditions.js';
import { API_VERSION, KIND, type LoopbackPolicy, type LoopbackPolicyStatus, type TargetStatus } from '../../src/api/loopbackpolicy.js';
import { kubectl, readObject, waitFor, type CommandResult } from './kube.js';

export interface PolicyRef {
  namespace: string;
  name: string;
  /** Default: the shared test cluster's admin kubeconfig. */
  kubeconfig?: string;
}

export interface PolicyWaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Appended to the timeout message, e.g. `() => operator.logs().slice(-4000)`. */
  context?: () => string | Promise<string>;
}

/** A manifest as a user writes it. `spec` is loose on purpose: admission tests send invalid ones. */
export interface PolicyManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string };
  spec?: unknown;
  [field: string]: unknown;
}

const label = (ref: PolicyRef) => `LoopbackPolicy ${ref.namespace}/${ref.name}`;
const cluster = (ref: PolicyRef) => (ref.kubeconfig ? { kubeconfig: ref.kubeconfig } : {});

/** A LoopbackPolicy manifest; without `spec` the object has none (the CRD defaults it). */
export function policyManifest(ref: PolicyRef, spec?: unknown, extra: Record<string, unknown> = {}): PolicyManifest {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: ref.name, namespace: ref.namespace },
    ...(spec === undefined ? {} : { spec }),
    ...extra,
  };
}

/**
 * `kubectl apply -f -` of a manifest object or of YAML text. Returns kubectl's result without judging it:
 * suites assert on the exit code and stderr themselves (admission tests expect refusals).
 */
export function applyPolicy(policy: PolicyManifest | string, options: { kubeconfig?: string } = {}): Promise<CommandResult> {
  return kubectl(['apply', '-f', '-'], { input: typeof policy === 'string' ? policy : JSON.stringify(policy), ...options });
}

/** The policy as stored, or undefined when there is none. Any other kubectl failure, or stderr output, throws. */
export async function findPolicy(ref: PolicyRef): Promise<LoopbackPolicy | undefined> {
  const res = await kubectl(['get', '-n', ref.namespace, `lbp/${ref.name}`, '-o', 'json'], cluster(ref));
  if (res.code !== 0 && /\(NotFound\)/.test(res.stderr)) return undefined;
  if (res.code !== 0 || res.stderr !== '') throw new Error(`kubectl get ${label(ref)} (exit ${res.code}): ${res.stderr}`);
  return JSON.parse(res.stdout) as LoopbackPolicy;
}

/** The policy as stored; throws when it does not exist. */
export async function getPolicy(ref: PolicyRef): Promise<LoopbackPolicy> {
  const policy = await findPolicy(ref);
  if (!policy) throw new Error(`${label(ref)} not found`);
  return policy;
}

export type ReportedStatus = LoopbackPolicyStatus & { conditions: Condition[]; targets: TargetStatus[] };

/** The status of a policy the operator has reported on; throws (naming the policy) when it has not yet. */
export function reportedStatus(policy: LoopbackPolicy): ReportedStatus {
  const status = policy.status;
  if (!status?.conditions || !status.targets) {
    throw new Error(`${label({ namespace: policy.metadata.namespace ?? '', name: policy.metadata.name ?? '' })} has no reported status: ${JSON.stringify(status)}`);
  }
  return status as ReportedStatus;
}

/** The policy as stored, or undefined when there is none, read in this process: what the waits and the checks a wait repeats poll. */
export function readPolicy(ref: PolicyRef): Promise<LoopbackPolicy | undefined> {
  return readObject<LoopbackPolicy>({ apiVersion: API_VERSION, kind: KIND, name: ref.name, namespace: ref.namespace }, ref.kubeconfig);
}

/** Polls the policy until `predicate` holds for it and returns that version of it. */
export function waitForPolicy(ref: PolicyRef, what: string, predicate: (policy: LoopbackPolicy) => boolean, options: PolicyWaitOptions = {}): Promise<LoopbackPolicy> {
  return waitFor(
    `${label(ref)}: ${what}`,
    async () => {
      const policy = await readPolicy(ref);
      if (!policy) throw new Error(`${label(ref)} not found`);
      return policy;
    },
    { ...options, until: predicate },
  );
}

/**
 * Waits for condition `type` with `status` (default True), and `reason` when given, and returns it. As in
 * `kubectl wait --for=condition=…`, a condition written for an older generation does not count.
 */
export async function waitForCondition(
  ref: PolicyRef,
  type: string,
  options: PolicyWaitOptions & { status?: Condition['status']; reason?: string } = {},
): Promise<Condition> {
  const { status = 'True', reason, ...wait } = options;
  const matching = (policy: LoopbackPolicy) =>
    policy.status?.conditions?.find(
      (c) =>
        c.type === type &&
        c.status === status &&
        (reason === undefined || c.reason === reason) &&
        (c.observedGeneration === undefined || c.observedGeneration >= (policy.metadata.generation ?? 0)),
    );
  const policy = await waitForPolicy(ref, `condition ${type}=${status}${reason ? ` (${reason})` : ''}`, (p) => matching(p) !== undefined, wait);
  return matching(policy) as Condition;
}

/** Waits until the policy is gone (its finalizer done); the timeout message shows it as last read. */
export async function waitForPolicyGone(ref: PolicyRef, options: PolicyWaitOptions = {}): Promise<void> {
  await waitFor(`${label(ref)} to be deleted`, () => readPolicy(ref), { timeoutMs: 45_000, ...options, until: (p) => p === undefined });
}

/**
 * Deletes the policy (`kubectl delete --wait=false`; a failure throws) and, unless `wait: false`, waits until
 * it is gone. Suites that kill the operator mid-revert pass `wait: false` and call `waitForPolicyGone` later.
 */
export async function deletePolicy(ref: PolicyRef, options: PolicyWaitOptions & { wait?: boolean } = {}): Promise<void> {
  const { wait = true, ...waitOptions } = options;
  const res = await kubectl(['delete', '-n', ref.namespace, `lbp/${ref.name}`, '--wait=false'], cluster(ref));
  if (res.code !== 0) throw new Error(`kubectl delete ${label(ref)} (exit ${res.code}): ${res.stderr}`);
  if (wait) await waitForPolicyGone(ref, waitOptions);
}
