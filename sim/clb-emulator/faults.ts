import type { FaultKind, FaultPlan, FaultRule } from './admin-types.js';

/**
 * Seeded fault injection. Every request for an action draws exactly one number per matching rule, in rule order,
 * whether or not the fault fires — so the same seed and the same sequence of calls give the same faults, and a
 * failing test can be replayed.
 */

/** mulberry32: tiny, fast, good enough for test reproducibility (not for anything cryptographic). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type TerminalFault =
  | { kind: 'error'; code: string; message: string }
  | { kind: 'http5xx'; status: number }
  | { kind: 'reset' };

export interface FaultDecision {
  latencyMs: number;
  /** Stops the request before the action runs (no state change). */
  terminal: TerminalFault | undefined;
  /** For async writes: the task will end with Status 1 and this Message, changing nothing. */
  taskFailure: string | undefined;
}

const KINDS: readonly FaultKind[] = ['error', 'http5xx', 'reset', 'latency', 'taskFailure'];

export function validateFaultPlan(plan: unknown): FaultPlan {
  if (typeof plan !== 'object' || plan === null) throw new Error('fault plan must be an object');
  const { seed, rules } = plan as { seed?: unknown; rules?: unknown };
  if (seed !== undefined && (typeof seed !== 'number' || !Number.isInteger(seed))) throw new Error('seed must be an integer');
  if (!Array.isArray(rules)) throw new Error('rules must be an array');
  const checked = rules.map((r: unknown, i): FaultRule => {
    if (typeof r !== 'object' || r === null) throw new Error(`rules[${i}] must be an object`);
    const rule = r as Partial<FaultRule>;
    if (typeof rule.action !== 'string' || rule.action === '') throw new Error(`rules[${i}].action must be "*" or an action name`);
    if (typeof rule.rate !== 'number' || rule.rate < 0 || rule.rate > 1) throw new Error(`rules[${i}].rate must be in [0, 1]`);
    if (!rule.kind || !KINDS.includes(rule.kind)) throw new Error(`rules[${i}].kind must be one of ${KINDS.join('|')}`);
    if (rule.kind === 'latency' && (typeof rule.latencyMs !== 'number' || rule.latencyMs < 0)) {
      throw new Error(`rules[${i}].latencyMs must be a non-negative number`);
    }
    if (rule.status !== undefined && (rule.status < 500 || rule.status > 599)) throw new Error(`rules[${i}].status must be 5xx`);
    if (rule.loadBalancerId !== undefined && (typeof rule.loadBalancerId !== 'string' || rule.loadBalancerId === '')) throw new Error(`rules[${i}].loadBalancerId must be a CLB id`);
    if (rule.caller !== undefined && (typeof rule.caller !== 'string' || rule.caller === '')) throw new Error(`rules[${i}].caller must be a caller name`);
    return { ...rule } as FaultRule;
  });
  return seed === undefined ? { rules: checked } : { seed, rules: checked };
}

export class FaultInjector {
  private plan: FaultPlan = { rules: [] };
  private rng: () => number = mulberry32(0);

  constructor(private readonly defaultSeed: number) {
    this.clear();
  }

  set(plan: FaultPlan): void {
    this.plan = validateFaultPlan(plan);
    this.rng = mulberry32(this.plan.seed ?? this.defaultSeed);
  }

  get(): FaultPlan {
    return structuredClone(this.plan);
  }

  clear(): void {
    this.set({ rules: [] });
  }

  /**
   * `loadBalancerIds`: the CLBs the request names; a rule with `loadBalancerId` matches only those requests. `caller`:
   * who signed it; a rule with `caller` matches only that caller's requests.
   */
  decide(action: string, isAsyncWrite: boolean, loadBalancerIds: readonly string[] = [], caller?: string): FaultDecision {
    const decision: FaultDecision = { latencyMs: 0, terminal: undefined, taskFailure: undefined };
    for (const rule of this.plan.rules) {
      if (rule.action !== '*' && rule.action !== action) continue;
      if (rule.loadBalancerId !== undefined && !loadBalancerIds.includes(rule.loadBalancerId)) continue;
      if (rule.caller !== undefined && rule.caller !== caller) continue;
      const fires = this.rng() < rule.rate;
      if (!fires) continue;
      switch (rule.kind) {
        case 'latency':
          decision.latencyMs += rule.latencyMs ?? 0;
          break;
        case 'taskFailure':
          if (isAsyncWrite) decision.taskFailure ??= rule.message ?? 'InternalError: the task failed (injected fault).';
          break;
        case 'error':
          decision.terminal ??= {
            kind: 'error',
            code: rule.code ?? 'InternalError',
            message: rule.message ?? 'An internal error occurred (injected fault).',
          };
          break;
        case 'http5xx':
          decision.terminal ??= { kind: 'http5xx', status: rule.status ?? 503 };
          break;
        case 'reset':
          decision.terminal ??= { kind: 'reset' };
          break;
      }
    }
    return decision;
  }
}
