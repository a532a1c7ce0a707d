/** CLB API emulator: public surface for tests, the TKE simulator and the demo. */
export { startClbEmulator, EMULATOR_HOST } from './server.js';
export type { ClbEmulator } from './server.js';
export { DEFAULT_TEST_CREDENTIALS, DEFAULT_OPTIONS, UNAUTHENTICATED_CALLER } from './options.js';
export type { CallerCredentials, EmulatorOptions } from './options.js';
export { callsByCallerAndAction, diffStats } from './stats-diff.js';
export { mulberry32 } from './faults.js';
export { ClbAdminClient, ClbAdminError } from './admin-client.js';
export type * from './admin-types.js';
export {
  ACCOUNT_PROFILES,
  accountSourceIpType,
  DEFAULT_CAPABILITIES,
  KEEPALIVE_SNAT_DISABLED_CODE,
  KEEPALIVE_SNAT_DISABLED_MESSAGE,
  SOURCE_100_64_DISABLED_CODE,
  SOURCE_100_64_DISABLED_MESSAGE,
} from './capabilities.js';
export { API_VERSION } from './api.js';
export { nodePortFor } from './health.js';
export type { TargetHealthSource, TargetProbe } from './health.js';
export { defaultHealthCheck } from './health-check.js';
export { ACTIONS } from './actions/index.js';
