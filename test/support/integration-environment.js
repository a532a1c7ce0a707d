// The integration project's test environment: Node's, pointed at this worker's control plane. The runner
// (test/support/integration-runner.js) publishes one kubeconfig per worker; worker N (JEST_WORKER_ID, 1 in a serial
// run) takes the Nth as KUBECONFIG, LOOPGUARD_TEST_USER_KUBECONFIG and LOOPGUARD_TEST_OPERATOR_KUBECONFIG (the
// operator's ServiceAccount, test/support/operator.ts), in the worker's own process environment, so
// the suite (test/support/kube.ts `kubeconfigPath()`) and every process it starts (kubectl, scripts, operators)
// reach the same control plane. Set before Node's environment copies process.env into the suite's sandbox.
import process from 'node:process';
import { TestEnvironment } from 'jest-environment-node';

const CONTROL_PLANES_ENV = 'LOOPGUARD_TEST_CONTROL_PLANES';

function useWorkersControlPlane() {
  const raw = process.env[CONTROL_PLANES_ENV];
  if (!raw) throw new Error(`${CONTROL_PLANES_ENV} is not set: integration suites run under the jest integration project, whose runner starts their control planes`);
  const planes = JSON.parse(raw);
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const plane = planes[worker - 1];
  if (!plane) throw new Error(`Jest worker ${worker} has no control plane (${planes.length} started)`);
  process.env.KUBECONFIG = plane.kubeconfig;
  process.env.LOOPGUARD_TEST_OPERATOR_KUBECONFIG = plane.operatorKubeconfig;
  if (plane.userKubeconfig) process.env.LOOPGUARD_TEST_USER_KUBECONFIG = plane.userKubeconfig;
  else delete process.env.LOOPGUARD_TEST_USER_KUBECONFIG;
}

export default class IntegrationEnvironment extends TestEnvironment {
  constructor(config, context) {
    useWorkersControlPlane();
    super(config, context);
  }
}
