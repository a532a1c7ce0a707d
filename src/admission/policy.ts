// Pure: the ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1, GA in Kubernetes 1.30) that
// warn whoever creates or updates an at-risk Service or Ingress, in Warn + Audit mode only: kubectl prints the
// message as `Warning: …` and the audit log records it; nothing is ever denied (failurePolicy Ignore as well, so a
// broken expression never blocks a write). scripts/gen-admission.ts writes config/components/admission-warnings and the chart's template
// from these objects; test/unit/admission.test.ts keeps the committed files equal to them.
//
// The CEL decides only what the object says outright (src/admission/shapes.ts); what the cluster makes of it comes
// from the parameters the operator keeps (src/admission/params.ts): the shapes at risk under this kube-proxy, and the
// namespaces an Enforce policy covers.
import { IngressAnnotation, LoopguardAnnotation, ServiceAnnotation, TKE_INGRESS_CLASS } from '../api/annotations.js';
import { annotation, has, nonEmpty, q } from './cel.js';
import { FALLBACK_FIX, FIXES, MORE, riskTexts, type Slot } from './messages.js';
import { ADMISSION_PARAMS_API_VERSION, ADMISSION_PARAMS_KIND } from '../api/admissionparams.js';
import { ADMISSION_PARAMS_NAME, UPGRADE_FALLBACK } from './params.js';
import { INGRESS_BITS, SERVICE_BITS } from './shapes.js';

export const POLICY_NAME = 'loopguard-loopback-warning';
/** The audit annotation's key; the audit log shows it as `<policy>/<key>`. */
export const AUDIT_KEY = 'loopback-risk';


const SLOT_EXPR: Record<Slot, string> = {
  dns: 'variables.name + "." + request.namespace + ".svc.cluster.local"',
  namespace: 'request.namespace',
  upgradeTo: 'variables.upgradeTo',
};

/** "text {dns} more" → `"text " + <dns> + " more"`. */
export function celTemplate(text: string): string {
  const parts = text.split(/(\{(?:dns|namespace|upgradeTo)\})/).filter((p) => p !== '');
  return parts.map((p) => (/^\{\w+\}$/.test(p) ? `(${SLOT_EXPR[p.slice(1, -1) as Slot]})` : q(p))).join(' + ');
}

function celMap(entries: Array<[string, string]>, indent: string): string {
  return `{\n${entries.map(([k, v]) => `${indent}  ${q(k)}: ${v}`).join(',\n')}\n${indent}}`;
}

export interface ParamRef {
  namespace: string;
}

type Obj = Record<string, unknown>;

export function admissionPolicy(): Obj {
  const shapeOf = (kind: string, bits: typeof SERVICE_BITS) => [q(kind), ...bits.map((b) => `(${b.cel} ? ${q(`.${b.segment}`)} : "")`)].join('\n  + ');
  // Only the root causes with a fix of their own (every one the parameters can name: test/unit/admission.test.ts);
  // any other gets the catalogue's general advice.
  const causes = riskTexts().filter(([id]) => FIXES[id] !== undefined);
  const lookup = (map: string, fallback: string) => `variables.rootCause in variables.${map} ? variables.${map}[variables.rootCause] : ${fallback}`;
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: POLICY_NAME },
    spec: {
      // Warn + Audit only (the binding): a failing expression must never block a write either.
      failurePolicy: 'Ignore',
      // loopguard's own kind, not a ConfigMap: kubernetes/kubernetes#130887 (crds/loopguard.dev_admissionparams.yaml).
      paramKind: { apiVersion: ADMISSION_PARAMS_API_VERSION, kind: ADMISSION_PARAMS_KIND },
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['services'] },
          { apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['ingresses'] },
        ],
      },
      // Cheap: everything else (ClusterIP Services, the bulk of writes) leaves before any variable is computed.
      matchConditions: [
        {
          name: 'loadbalancer-or-ingress',
          expression: 'request.kind.kind == "Ingress" || (has(object.spec.type) && object.spec.type == "LoadBalancer")',
        },
      ],
      variables: [
        { name: 'annotations', expression: 'has(object.metadata.annotations) ? object.metadata.annotations : {}' },
        { name: 'data', expression: 'params != null && has(params.data) ? params.data : {}' },
        { name: 'isService', expression: 'request.kind.kind == "Service"' },
        { name: 'name', expression: 'has(object.metadata.name) ? object.metadata.name : ""' },
        {
          name: 'tkeTarget',
          // The model's gates G3/G3'/G3'' (docs/diagnosis.md §4): a TKE LoadBalancer Service, a qcloud (or class-less) Ingress.
          expression: [
            'variables.isService',
            '  ? !has(object.spec.loadBalancerClass) || object.spec.loadBalancerClass == ""',
            `  : (${has(IngressAnnotation.Class)} ? ${annotation(IngressAnnotation.Class)}.trim()`,
            '     : (has(object.spec.ingressClassName) ? object.spec.ingressClassName : "")',
            `    ) in ["", ${q(TKE_INGRESS_CLASS)}]`,
          ].join('\n'),
        },
        {
          name: 'optedOut',
          // G1/G2: loopguard.dev/skip with any value but "false" (an unparsable one counts as skip), TKE's mode: skip.
          expression: [
            `(${has(LoopguardAnnotation.Skip)} && ${annotation(LoopguardAnnotation.Skip)}.trim().lowerAscii() != "false")`,
            `|| (variables.isService`,
            `    ? ${has(ServiceAnnotation.Mode)} && ${annotation(ServiceAnnotation.Mode)}.trim().lowerAscii() == "skip"`,
            `    : ${has(IngressAnnotation.Mode)} && ${annotation(IngressAnnotation.Mode)}.trim().lowerAscii() == "skip")`,
          ].join('\n'),
        },
        {
          name: 'privateClb',
          // TKE builds a private CLB exactly when the subnet annotation is set (tencent-cloud.md §2); an existing CLB's type is not in the object.
          expression: `variables.isService ? ${nonEmpty(ServiceAnnotation.InternalSubnetId)} : ${nonEmpty(IngressAnnotation.SubnetId)}`,
        },
        { name: 'shape', expression: `variables.isService\n? ${shapeOf('Service', SERVICE_BITS)}\n: ${shapeOf('Ingress', INGRESS_BITS)}` },
        {
          name: 'rootCause',
          expression: [
            'variables.tkeTarget && !variables.optedOut && variables.privateClb && ("risk." + variables.shape) in variables.data',
            '  ? string(variables.data["risk." + variables.shape])',
            '  : ""',
          ].join('\n'),
        },
        { name: 'covered', expression: '("enforce." + request.kind.kind + "." + request.namespace) in variables.data' },
        { name: 'upgradeTo', expression: `"upgradeTo" in variables.data ? string(variables.data["upgradeTo"]) : ${q(UPGRADE_FALLBACK)}` },
        {
          name: 'where',
          expression: 'variables.isService && "kubeProxy" in variables.data ? " in this cluster (" + string(variables.data["kubeProxy"]) + ")" : ""',
        },
        { name: 'risks', expression: celMap(causes.map(([id, text]) => [id, q(text)]), '') },
        { name: 'fixes', expression: celMap(causes.map(([id]) => [id, celTemplate(FIXES[id] ?? FALLBACK_FIX)]), '') },
        { name: 'risk', expression: lookup('risks', q('loopback possible')) },
        { name: 'fix', expression: lookup('fixes', celTemplate(FALLBACK_FIX)) },
        {
          name: 'message',
          expression: [
            '"loopguard: " + request.kind.kind + " " + request.namespace + "/" + variables.name',
            '+ " is at risk of CLB loopback" + variables.where + ": " + variables.risk',
            '+ " [" + variables.rootCause + "]. Fix: " + variables.fix',
            `+ ". More: " + ${celTemplate(MORE)}`,
          ].join('\n'),
        },
      ],
      validations: [
        {
          expression: 'variables.rootCause == "" || variables.covered',
          messageExpression: 'variables.message',
          message: 'loopguard: this object is at risk of CLB loopback in this cluster; see loopguard doctor and docs/diagnosis.md',
        },
      ],
      auditAnnotations: [{ key: AUDIT_KEY, valueExpression: '!variables.covered ? variables.rootCause : ""' }],
    },
  };
}

export function admissionBinding(ref: ParamRef): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: POLICY_NAME },
    spec: {
      policyName: POLICY_NAME,
      validationActions: ['Warn', 'Audit'],
      // Written by the operator (src/admission/params-writer.ts); until it exists the policy says nothing.
      paramRef: { name: ADMISSION_PARAMS_NAME, namespace: ref.namespace, parameterNotFoundAction: 'Allow' },
    },
  };
}
