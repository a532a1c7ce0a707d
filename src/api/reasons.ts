// CamelCase reasons for LoopbackPolicy conditions and for Events. Reasons are the programmatic part
// (stable, matched by alerts, Argo CD/Flux health checks and tests); messages are for people and say
// what to do. Never rename a reason: it is API.

/** Reasons of the `Ready` condition (always present). */
export const ReadyReason = {
  /** First reconcile of a generation has not finished; Ready=Unknown so kstatus does not report Current early. */
  Initializing: 'Initializing',
  /** Enforce: every target reached its desired state and none is at risk. */
  Reconciled: 'Reconciled',
  /** Enforce: loopguard did everything the policy and the platform allow; some targets stay at risk (see counts/message). */
  ReconciledWithRisks: 'ReconciledWithRisks',
  /** Audit: every target is diagnosed; nothing was changed. */
  AuditComplete: 'AuditComplete',
  /** Work remains (changes being applied, targets being observed). Mirrors Reconciling=True. */
  Progressing: 'Progressing',
} as const;

/** Reasons of `Reconciling` (present only while True, kstatus "abnormal-true"). */
export const ReconcilingReason = {
  /** Enforce: desired-state changes are being applied to CLBs or targets. */
  ApplyingChanges: 'ApplyingChanges',
  /** loopguard has not finished observing some targets' CLBs. */
  Observing: 'Observing',
  /** A transient error (throttling, CLB busy, timeout) is being retried with backoff. */
  RetryingAfterError: 'RetryingAfterError',
  /** The policy's generation changed and has not been evaluated yet. */
  NewGeneration: 'NewGeneration',
  /** The policy is being deleted and its revert is on its way (a wait for TKE, a retried error); the message names the cause. */
  Terminating: 'Terminating',
} as const;

/**
 * Reasons of `Stalled` (present only while True): progress needs a human. Ready=False carries the same
 * reason so `kubectl get lbp -o wide` shows it.
 */
export const StalledReason = {
  /** CAM denied a CLB action (`UnauthorizedOperation`, `AuthFailure*`): grant the action named in the message. */
  PermissionDenied: 'PermissionDenied',
  /** The account lacks the CLB L7 SNAT + keepalive capability: file the ticket named in the message. */
  KeepaliveCapabilityMissing: 'KeepaliveCapabilityMissing',
  /** The CLB rejects the non-VIP (100.64.0.0/10) health-check source: file the ticket named in the message. */
  HealthCheckSourceCapabilityMissing: 'HealthCheckSourceCapabilityMissing',
  /** The CLB rejects LoadBalancerPassToTarget ("allow traffic from CLB by default"): see the message. */
  PassToTargetCapabilityMissing: 'PassToTargetCapabilityMissing',
  /** The CLB rejects SnatPro (cross-region binding 2.0): file the ticket named in the message. */
  SnatProCapabilityMissing: 'SnatProCapabilityMissing',
  /** A target's TKE annotations contradict each other (e.g. tke-service-config and -auto both set). */
  TargetMisconfigured: 'TargetMisconfigured',
  /** The CLB API rejected a request as invalid (`InvalidParameter*`); the message quotes it. */
  InvalidRequest: 'InvalidRequest',
  /** The policy is being deleted and the revert cannot finish; the message names the target, the cause and the way out. */
  DeletionBlocked: 'DeletionBlocked',
  /** loopguard changed a target (managedFields) but its LoopbackRecord is gone (e.g. the CRD was pruned); the message names the fix. */
  RecordLost: 'RecordLost',
  /** The spec passed admission but cannot be acted on (should not happen with the CRD's CEL rules). */
  InvalidSpec: 'InvalidSpec',
} as const;

/** Reasons of Events loopguard emits on Services, Ingresses and LoopbackPolicies. */
export const EventReason = {
  /** Normal: a listener's health-check source was switched (ModifyListener/ModifyRule task succeeded). */
  HealthCheckSourceSwitched: 'HealthCheckSourceSwitched',
  /** Normal: loopguard set service.cloud.tencent.com/prevent-loopback. */
  PreventLoopbackAnnotated: 'PreventLoopbackAnnotated',
  /** Normal: keepalive enabled on an L7 listener through the TkeServiceConfig. */
  KeepaliveEnabled: 'KeepaliveEnabled',
  /** Normal: LoadBalancerPassToTarget turned on (policy opt-in). */
  ClbTrafficAllowedByDefault: 'ClbTrafficAllowedByDefault',
  /** Normal: every mitigation of the target is in place. */
  TargetMitigated: 'TargetMitigated',
  /** Warning: a target is at risk and the policy (Audit mode or its settings) leaves it so. */
  TargetAtRisk: 'TargetAtRisk',
  /** Warning: something put back a value loopguard manages (console, TKE resync); loopguard corrected it. */
  DriftCorrected: 'DriftCorrected',
  /** Normal: recorded originals restored (policy deleted, target deselected or skipped). */
  OriginalsRestored: 'OriginalsRestored',
  /** Warning: a loopguard or TKE annotation on the target could not be parsed; it is ignored. */
  InvalidAnnotation: 'InvalidAnnotation',
  /** Warning: another, older policy already manages the target. */
  PolicyConflict: 'PolicyConflict',
  PolicyPrecedence: 'PolicyPrecedence',
  SkipAnnotationIgnored: 'SkipAnnotationIgnored',
  /** Warning: the Ingress's TkeServiceConfig also governs Ingresses loopguard may not change; nothing written. */
  SharedConfig: 'SharedConfig',
  /** Warning: the Gateway's EnvoyProxy also reaches Gateways loopguard may not change (or is another namespace's); nothing written. */
  SharedEnvoyProxy: 'SharedEnvoyProxy',
  /** Warning: other listeners on the Service's CLB health-check from the VIP: prevent-loopback (binds the whole VIP) not set. */
  SharedClb: 'SharedClb',
  /** Warning: a policy's deletion waits for a revert that cannot finish (cause and way out in the message). */
  DeletionBlocked: 'DeletionBlocked',
  /** Warning: loopguard changed the target but its LoopbackRecord is gone: its originals cannot be restored (fix in the message). */
  RecordLost: 'RecordLost',
  /** Warning: a policy was deleted with loopguard.dev/abandon: its changes stay, unrecorded and unmaintained. */
  RevertAbandoned: 'RevertAbandoned',
  /** Warning: the CLB id on the target names a CLB that is not the target's (owner tag / status VIP); nothing written. */
  ForeignClb: 'ForeignClb',
  /** Warning: a CLB write failed permanently; the message quotes the CLB error. */
  ClbWriteFailed: 'ClbWriteFailed',
  /** Warning: a Kubernetes write (annotation, TkeServiceConfig patch) failed. */
  TargetUpdateFailed: 'TargetUpdateFailed',
  /** Warning: a CLB capability is missing for the account (ticket needed). */
  CapabilityMissing: 'CapabilityMissing',
  /** Warning: the CLB API denied an action; the message names it. */
  PermissionDenied: 'PermissionDenied',
  /** Normal: l7.inClusterDNS: Managed: CoreDNS answers the target's host name with its Service's address (docs/dns.md §4). */
  DnsRewritten: 'DnsRewritten',
  /** Warning: l7.inClusterDNS: Managed does not rewrite one of the target's host names; the message says why. */
  DnsRewriteRefused: 'DnsRewriteRefused',
  /** Normal, on a policy: shutdown stopped its round mid-plan; the message names where; the next leader resumes it. */
  RoundInterrupted: 'RoundInterrupted',
} as const;

export type ReadyReasonValue = (typeof ReadyReason)[keyof typeof ReadyReason];
export type ReconcilingReasonValue = (typeof ReconcilingReason)[keyof typeof ReconcilingReason];
export type StalledReasonValue = (typeof StalledReason)[keyof typeof StalledReason];
export type EventReasonValue = (typeof EventReason)[keyof typeof EventReason];

/**
 * CamelCase reasons, stable (they end up in condition reasons, Events and metrics labels). Where
 * src/api/reasons.ts has a Stalled reason for the same cause the value is identical, so the
 * controllers can pass it through. (Kept here, at the bottom layer, so that every error reason is one type.)
 */
export type CloudErrorReason =
  // retryable
  | 'Throttled' // RequestLimitExceeded*: our budget or someone sharing the quota (TKE's controllers)
  | 'ClbBusy' // another task holds the CLB (ResourceInOperating)
  | 'CloudUnavailable' // InternalError, HTTP 5xx
  | 'NetworkError' // reset, refused, DNS, request timeout
  | 'ClbTaskFailed' // the async task ended with Status 1
  | 'ClbTaskTimeout' // the async task did not finish in time (it may still finish)
  // permanent: need a person
  | 'CredentialsUnavailable' // no credential source worked
  | 'CredentialsRejected' // AuthFailure.*: wrong/disabled key, bad token
  | 'ClockSkew' // AuthFailure.SignatureExpire
  | 'PermissionDenied' // CAM: grant clb:<Action>
  | 'HealthCheckSourceCapabilityMissing' // 100.64.0.0/10 source not enabled for the account
  | 'KeepaliveCapabilityMissing' // L7 SNAT + keepalive not whitelisted
  | 'PassToTargetCapabilityMissing' // LoadBalancerPassToTarget refused (IPv6 CLB, or not offered to the account)
  | 'SnatProCapabilityMissing' // SnatPro (cross-region binding 2.0) refused
  | 'ClbNotFound'
  | 'ListenerNotFound'
  | 'RuleNotFound'
  | 'InvalidRequest' // InvalidParameter*, MissingParameter, UnsupportedOperation, …
  | 'QuotaExceeded' // LimitExceeded (resource quota, not the request rate)
  | 'OperationDenied'
  | 'CloudError' // an API error code we do not know
  | 'Aborted'; // shutdown / caller cancelled

/**
 * Why a target's step, read or release failed (TargetError.reason): a CLB error's reason, a Stalled reason, or one of
 * loopguard's own. Event reasons and Stalled conditions are chosen from it by table, never by matching text.
 */
export type ErrorReason = CloudErrorReason | StalledReasonValue | 'InvalidRecord' | 'RetryingAfterError' | 'TkeSyncFailed';
