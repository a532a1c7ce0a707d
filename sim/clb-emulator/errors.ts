/**
 * Tencent Cloud API 3.0 errors. The emulator throws `ApiError` anywhere in a request's life; the server turns
 * it into the HTTP-200 error envelope the SDK parses into `TencentCloudSDKHttpException.code`
 * (tke-clb.md §3 "Error codes", §4 "Errors").
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

/** Exact real-world wording (tke-clb.md §3, from tkestack/tke-extend-network-controller `pkg/clb/api_test.go`). */
export const resourceInOperating = (lbId: string): ApiError =>
  new ApiError(
    'FailedOperation.ResourceInOperating',
    `Loadbalancer(${lbId}) is not in normal desState, maybe some tasks are being processed, please try later.`,
  );
