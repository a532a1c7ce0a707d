// A JSON patch (RFC 6902) as the Kubernetes API takes it (application/json-patch+json). The planner builds the
// ops (src/plan/config-patch.ts); the writer sends them behind a resourceVersion guard (src/kube/writer.ts).

export interface JsonPatchOp {
  op: 'add' | 'replace' | 'remove' | 'test';
  path: string;
  value?: unknown;
}

/** The patch as sent: the resourceVersion test first, so a concurrent writer (TKE's resync) makes it fail whole. */
export function guardedPatch(resourceVersion: string, ops: readonly JsonPatchOp[]): JsonPatchOp[] {
  return [{ op: 'test', path: '/metadata/resourceVersion', value: resourceVersion }, ...ops];
}
