// JSON with every object's keys sorted: two values compare by content whatever order their keys came in (the
// apiserver keeps its own order). The namespace report's seal covers these very bytes (src/kube/report-seal.ts).

export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}
