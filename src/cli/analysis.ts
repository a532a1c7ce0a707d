// Pure: one target's verdict and the plan Enforce would carry out, from the same pure planner a policy round
// runs (planPolicy over a snapshot, src/plan/policy-plan.ts) with the policy that manages the target as owner, its
// LoopbackRecord and the governing TkeServiceConfig. `loopguard doctor` feeds it what it read from the cluster and
// the CLB API; `loopguard plan` feeds it facts made up from manifests (src/cli/offline.ts).
import type { ResolvedPolicySpec } from '../api/loopbackpolicy.js';
import type { ClusterProfile } from '../model/cluster-profile.js';
import type { ClbObservation, TargetFacts } from '../model/facts.js';
import type { ConfigView } from '../plan/l7.js';
import type { RecordOwnership } from '../model/record-registry.js';
import { planPolicy, type PlannedTarget } from '../plan/policy-plan.js';
import { NO_SHARING, type SharedView } from '../plan/snapshot.js';

/** Owner of the plan when no policy selects the target: it holds no record, so nothing is released in its name. */
export const NO_POLICY = '(no policy)';

export interface AnalysisInput {
  facts: TargetFacts;
  spec: ResolvedPolicySpec;
  /** The owner key (record-registry.ts) of the policy that manages the target, if one selects it. */
  owner?: string;
  /** A cluster policy with `skipAnnotation: Ignore` manages it. */
  ignoreSkipAnnotation?: boolean;
  profile: ClusterProfile;
  clb: ClbObservation;
  /** When `clb` was read (ms since the epoch). */
  observedAt?: number;
  ownership?: RecordOwnership;
  /** The Ingress's governing TkeServiceConfig. */
  config?: ConfigView;
  /** Whether TkeServiceConfigs could be read: without them no L7 step is planned (the operator waits for its cache). */
  configsKnown: boolean;
  /** Who else uses the target's CLB and TkeServiceConfig (none known: NO_SHARING). */
  shared?: SharedView;
  now: Date;
  graceMs: number;
}

export type Analysis = PlannedTarget;

export function analyzeTarget(input: AnalysisInput): Analysis {
  const { facts } = input;
  const { targets } = planPolicy({
    owner: input.owner ?? NO_POLICY,
    spec: input.spec,
    profile: input.profile,
    // The CLI learns nothing from refusals: it plans as a fresh operator would.
    capabilities: {},
    configsKnown: input.configsKnown,
    now: input.now,
    graceMs: input.graceMs,
    targets: [
      {
        facts,
        clb: input.clb,
        ...(input.observedAt !== undefined ? { observedAt: input.observedAt } : {}),
        ...(input.ownership ? { ownership: input.ownership } : {}),
        ...(input.config ? { config: input.config } : {}),
      },
    ],
    orphans: [],
    shared: input.shared ?? NO_SHARING,
    ...(input.ignoreSkipAnnotation ? { ignoreSkipAnnotation: true } : {}),
  });
  return targets[0] as PlannedTarget;
}
