/** TKE controller simulator: public surface for tests, `npm run dev:up` and the demo. */
export { startTkeSimulator } from './simulator.js';
export type { TkeSimulator, TkeSimulatorOptions } from './simulator.js';
export type { ClbConnection } from './clb-api.js';
export type { AccountDefaults, SyncScope, VipBinder } from './context.js';
export { SYNC_SCOPES } from './context.js';
export { MISSING_ENABLE_READINGS } from './health-check-enable.js';
export type { MissingEnableReading } from './health-check-enable.js';
export { applyClusterProfile, clusterProfile, CLUSTER_PROFILES } from './profiles.js';
export type { ClusterProfileName } from './profiles.js';
export { kubeProxyProfile, parseTkeVersion, supportsPreventLoopback } from './kube-proxy.js';
export type { KubeProxyProfile } from './kube-proxy.js';
export * as annotations from './annotations.js';
export { TKE_SERVICE_CONFIG, TKE_SERVICE_CONFIG_API_VERSION, autoConfigName } from './tke-service-config.js';
export type { TkeServiceConfig, TkeServiceConfigSpec } from './tke-service-config.js';
export { REASON_CONFIG_INVALID, REASON_CONFIG_NOT_FOUND, REASON_SYNC_FAILED } from './config-sync.js';
