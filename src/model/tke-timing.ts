// How long loopguard gives TKE to act on what it was asked before it says TKE did not: a fact about TKE's
// controllers (they apply a TkeServiceConfig edit within seconds), shared by the planner, the operator's
// configuration default and the CLI.

/** How long TKE gets to apply a declared TkeServiceConfig before loopguard says it did not (TKE applies edits within seconds). */
export const TKE_GRACE_MS = 10_000;
