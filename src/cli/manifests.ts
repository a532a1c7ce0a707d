// Pure: Kubernetes manifests as `loopguard plan` reads them. Multi-document YAML or JSON, `kind: List` (what
// `kubectl get -o yaml` prints), `kustomize build` and `helm template` output; each object keeps the file and line it
// starts at, for the table, Markdown and SARIF locations. Services, Ingresses (networking.k8s.io/v1, and the older
// v1beta1 shape), TkeServiceConfigs and LoopbackPolicies are kept; everything else is counted and skipped.
import type { V1Ingress, V1Service } from '@kubernetes/client-node';
import { LineCounter, parseAllDocuments, isMap, isSeq } from 'yaml';
import { API_VERSION, KIND as POLICY_KIND, type LoopbackPolicy } from '../api/loopbackpolicy.js';
import type { TkeServiceConfigObject } from './cluster-reads.js';
import { CliError } from './errors.js';
import type { SourceLocation } from './report.js';

export interface ManifestObject {
  object: Record<string, unknown>;
  source: SourceLocation;
}

export interface Located<T> {
  object: T;
  source: SourceLocation;
}

export interface ManifestSet {
  services: Located<V1Service>[];
  ingresses: Located<V1Ingress>[];
  tkeServiceConfigs: TkeServiceConfigObject[];
  policies: LoopbackPolicy[];
  /** Objects of other kinds (Deployments, Namespaces, …). */
  skipped: number;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every object of a YAML/JSON stream with the line it starts at; a syntax error is one line naming file and line. */
export function parseManifests(text: string, file: string): ManifestObject[] {
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lines, prettyErrors: false });
  const out: ManifestObject[] = [];
  // parseAllDocuments returns an EmptyStream (no documents) for an empty input.
  for (const doc of Array.isArray(docs) ? docs : []) {
    const error = doc.errors[0];
    if (error) {
      const at = lines.linePos(error.pos[0]);
      throw new CliError(`cannot parse ${file} line ${at.line}: ${error.message.split('\n')[0]}`);
    }
    const contents = doc.contents;
    if (!contents) continue;
    let value: unknown;
    try {
      // maxAliasCount: a "billion laughs" document (aliases of aliases) is refused instead of expanded.
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      const at = lines.linePos(contents.range?.[0] ?? 0);
      throw new CliError(`cannot parse ${file} line ${at.line}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
    if (!isObject(value)) continue;
    const line = lines.linePos(contents.range?.[0] ?? 0).line;
    if (typeof value['kind'] === 'string' && value['kind'].endsWith('List') && Array.isArray(value['items'])) {
      const seq: unknown = isMap(contents) ? contents.get('items', true) : undefined;
      const nodes = isSeq(seq) ? (seq.items as { range?: [number, number, number] | null }[]) : [];
      (value['items'] as unknown[]).forEach((item, i) => {
        if (!isObject(item)) return;
        const start = nodes[i]?.range?.[0];
        out.push({ object: item, source: { file, line: start !== undefined ? lines.linePos(start).line : line } });
      });
      continue;
    }
    out.push({ object: value, source: { file, line } });
  }
  return out;
}

function group(apiVersion: unknown): string {
  return typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

/** The v1beta1 Ingress backend (`serviceName`, `servicePort`) in the v1 shape the assessment reads. */
function v1Backend(backend: unknown): unknown {
  if (!isObject(backend) || isObject(backend['service']) || typeof backend['serviceName'] !== 'string') return backend;
  const port = backend['servicePort'];
  return { service: { name: backend['serviceName'], port: typeof port === 'number' ? { number: port } : { name: String(port ?? '') } } };
}

function normalizeIngress(obj: Record<string, unknown>): V1Ingress {
  const spec = isObject(obj['spec']) ? obj['spec'] : {};
  const rules = Array.isArray(spec['rules'])
    ? spec['rules'].map((r: unknown) => {
        if (!isObject(r) || !isObject(r['http']) || !Array.isArray(r['http']['paths'])) return r;
        const paths = (r['http']['paths'] as unknown[]).map((p) => (isObject(p) ? { ...p, backend: v1Backend(p['backend']) } : p));
        return { ...r, http: { ...r['http'], paths } };
      })
    : spec['rules'];
  const defaultBackend = spec['defaultBackend'] ?? spec['backend'];
  return { ...obj, spec: { ...spec, rules, ...(defaultBackend ? { defaultBackend: v1Backend(defaultBackend) } : {}) } } as V1Ingress;
}

/** Objects in a namespace: their own, else the one given with -n (kubectl apply's default). */
function withNamespace(obj: Record<string, unknown>, namespace: string): Record<string, unknown> {
  const metadata = isObject(obj['metadata']) ? obj['metadata'] : {};
  return { ...obj, metadata: { ...metadata, namespace: typeof metadata['namespace'] === 'string' && metadata['namespace'] ? metadata['namespace'] : namespace } };
}

export function classify(objects: readonly ManifestObject[], defaultNamespace: string): ManifestSet {
  const set: ManifestSet = { services: [], ingresses: [], tkeServiceConfigs: [], policies: [], skipped: 0 };
  for (const { object, source } of objects) {
    const kind = object['kind'];
    const g = group(object['apiVersion']);
    const obj = withNamespace(object, defaultNamespace);
    if (kind === 'Service' && object['apiVersion'] === 'v1') set.services.push({ object: obj as V1Service, source });
    else if (kind === 'Ingress' && (g === 'networking.k8s.io' || g === 'extensions')) set.ingresses.push({ object: normalizeIngress(obj), source });
    else if (kind === 'TkeServiceConfig' && g === 'cloud.tencent.com') set.tkeServiceConfigs.push(obj as TkeServiceConfigObject);
    else if (kind === POLICY_KIND && object['apiVersion'] === API_VERSION) set.policies.push(obj as unknown as LoopbackPolicy);
    else set.skipped++;
  }
  return set;
}
