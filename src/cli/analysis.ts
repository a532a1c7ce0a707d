// Pure: one target's verdict and the plan Enforce would carry out, computed exactly as a policy round does
// (src/controllers/policy/round.ts): assessTarget, then planTarget with the policy that manages the target as owner,
// its LoopbackRecord and the governing TkeServiceConfig. `loopguard doctor` feeds it what it read from the cluster and
// the CLB API; `loopguard plan` feeds it facts made up from manifests (src/cli/offline.ts).
import type { ResolvedPolicySpec } from '../api/loopbackpolicy.js';
import { assessTarget, type Assessment } from '../model/assessment.js';
import type { ClusterProfile } from '../model/cluster-profile.js';
import type { ClbObservation, TargetFacts } from '../model/facts.js';
import type { ConfigView } from '../plan/l7.js';
import type { Ownership } from '../plan/ownership.js';
import { planTarget } from '../plan/policy-plan.js';
import type { TargetPlan } from '../plan/steps.js';

/** Owner of the plan when no policy selects the target: it holds no record, so nothing is released in its name. */
export const NO_POLICY = '(no policy)';

export interface AnalysisInput {
  facts: TargetFacts;
  spec: ResolvedPolicySpec;
  /** `<namespace>/<name>` of the policy that manages the target, if one selects it. */
  policy?: string;
  profile: ClusterProfile;
  clb: ClbObservation;
  /** When `clb` was read (ms since the epoch). */
  observedAt?: number;
  ownership?: Ownership;
  /** The Ingress's governing TkeServiceConfig. */
  config?: ConfigView;
  /** Whether TkeServiceConfigs could be read: without them no L7 step is planned (the operator waits for its cache). */
  configsKnown: boolean;
  now: Date;
  graceMs: number;
}

export interface Analysis {
  assessment: Assessment;
  plan: TargetPlan;
}

export function analyzeTarget(input: AnalysisInput): Analysis {
  const { facts } = input;
  const assessment = assessTarget(facts, { policy: input.spec, profile: input.profile, clb: input.clb });
  const base = { target: assessment.target, layer: facts.kind === 'Service' ? ('L4' as const) : ('L7' as const), purpose: 'Mitigate' as const };
  if (facts.kind === 'Ingress' && !input.configsKnown) return { assessment, plan: { ...base, steps: [] } };
  const clb = input.clb.state === 'Found' ? input.clb.clb : undefined;
  const plan = planTarget(
    { owner: input.policy ?? NO_POLICY, rejected: { keepalive: false, range100_64: false }, now: input.now, graceMs: input.graceMs },
    {
      assessment,
      annotations: facts.annotations,
      ...(input.ownership ? { ownership: input.ownership } : {}),
      ...(clb ? { clb } : {}),
      ...(input.observedAt !== undefined ? { observedAt: input.observedAt } : {}),
      ...(input.config ? { config: input.config } : {}),
    },
  );
  return { assessment, plan };
}
