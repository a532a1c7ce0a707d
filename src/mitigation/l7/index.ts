// L7 mitigation: not implemented yet (placeholder so the operator wiring is in place). Enforce policies
// report the plan but change nothing until this lands.
import type { LayerMitigator, MitigationContext } from '../context.js';

export function createL7Mitigator(_ctx: MitigationContext): LayerMitigator {
  return {
    apply: async () => [],
    revert: async () => undefined,
  };
}
