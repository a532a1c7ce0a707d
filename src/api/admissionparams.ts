// AdmissionParams (loopguard.dev/v1alpha1): TypeScript mirror of crds/loopguard.dev_admissionparams.yaml, the kind of
// the admission warning's parameter object (a kind of loopguard's own because of kubernetes/kubernetes#130887; the
// CRD's header says why). Its `data` has a ConfigMap's shape.
import { GROUP, VERSION } from './loopbackpolicy.js';

export const ADMISSION_PARAMS_KIND = 'AdmissionParams';
export const ADMISSION_PARAMS_PLURAL = 'admissionparams';
export const ADMISSION_PARAMS_API_VERSION = `${GROUP}/${VERSION}`;

export interface AdmissionParams {
  apiVersion: typeof ADMISSION_PARAMS_API_VERSION;
  kind: typeof ADMISSION_PARAMS_KIND;
  metadata: { name: string; namespace: string; resourceVersion?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}
