/**
 * Tencent Cloud API 3.0 errors. The emulator throws `ApiError` anywhere in a request's life; the server turns
 * it into the HTTP-200 error envelope the SDK parses into `TencentCloudSDKHttpException.code`
 * (tencent-cloud.md §3 "Error codes", §4 "Errors").
 */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const missingParameter = (name: string): ApiError =>
  new ApiError('MissingParameter', `The request is missing a required parameter \`${name}\`.`);

export const formatError = (name: string, expected: string): ApiError =>
  new ApiError('InvalidParameter.FormatError', `The parameter \`${name}\` must be ${expected}.`);

export const rangeError = (name: string, value: unknown, range: string): ApiError =>
  new ApiError('InvalidParameterValue.Range', `The value \`${String(value)}\` of \`${name}\` is out of range ${range}.`);

export const lbNotFound = (id: string): ApiError =>
  new ApiError('InvalidParameter.LBIdNotFound', `LoadBalancer not exist: ${id}`);

export const listenerNotFound = (id: string): ApiError =>
  new ApiError('InvalidParameter.ListenerIdNotFound', `Listener not exist: ${id}`);

export const locationNotFound = (id: string): ApiError =>
  new ApiError('InvalidParameter.LocationNotFound', `Location not exist: ${id}`);

/** Exact real-world wording (tencent-cloud.md §3, from tkestack/tke-extend-network-controller `pkg/clb/api_test.go`). */
export const resourceInOperating = (lbId: string): ApiError =>
  new ApiError(
    'FailedOperation.ResourceInOperating',
    `Loadbalancer(${lbId}) is not in normal desState, maybe some tasks are being processed, please try later.`,
  );

/**
 * IPv6 CLBs are public-only: `AddressIPVersion` "仅适用于公网负载均衡" (clb_models.d.ts CreateLoadBalancerRequest,
 * tencent-cloud.md §9 #4). The code is assumed (sim/README.md): the refusal is about two parameters together.
 */
export const ipv6NotInternal = (ipVersion: string): ApiError =>
  new ApiError(
    'InvalidParameterCombination',
    `AddressIPVersion ${ipVersion} is only supported by public (LoadBalancerType OPEN) load balancers; an INTERNAL load balancer is IPv4.`,
  );

/** IPv6 CLBs cannot take health checks from 100.64.0.0/10 (tencent-cloud.md §3, §9 #4); the code is assumed. */
export const ipv6Source100_64 = (lbId: string): ApiError =>
  new ApiError(
    'InvalidParameterValue',
    `SourceIpType=1 (health-check source 100.64.0.0/10) is not supported by IPv6 load balancer ${lbId}; use SourceIpType=0.`,
  );

/** …nor `LoadBalancerPassToTarget` (tencent-cloud.md §3, §9 #4); the code is assumed. */
export const ipv6PassToTarget = (lbId: string): ApiError =>
  new ApiError('InvalidParameterValue', `LoadBalancerPassToTarget is not supported by IPv6 load balancer ${lbId}.`);
